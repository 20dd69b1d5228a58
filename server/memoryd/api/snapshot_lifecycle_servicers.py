"""SnapshotService and LifecycleService: the contract is served, the logic is not built yet."""

from __future__ import annotations

from memoryd.api.not_built import SNAPSHOT_LIFECYCLE, not_built
from memoryd_proto.v1 import lifecycle_service_pb2_grpc as lgrpc
from memoryd_proto.v1 import snapshot_service_pb2_grpc as sgrpc


class SnapshotServicer(sgrpc.SnapshotServiceServicer):
    BuildSnapshot = not_built("SnapshotService.BuildSnapshot", SNAPSHOT_LIFECYCLE)
    DefaultRead = not_built("SnapshotService.DefaultRead", SNAPSHOT_LIFECYCLE)
    SaveState = not_built("SnapshotService.SaveState", SNAPSHOT_LIFECYCLE)
    LoadState = not_built("SnapshotService.LoadState", SNAPSHOT_LIFECYCLE)


class LifecycleServicer(lgrpc.LifecycleServiceServicer):
    GetStats = not_built("LifecycleService.GetStats", SNAPSHOT_LIFECYCLE)
    Archive = not_built("LifecycleService.Archive", SNAPSHOT_LIFECYCLE)
    Restore = not_built("LifecycleService.Restore", SNAPSHOT_LIFECYCLE)
    Prune = not_built("LifecycleService.Prune", SNAPSHOT_LIFECYCLE)
    Reset = not_built("LifecycleService.Reset", SNAPSHOT_LIFECYCLE)
    Compact = not_built("LifecycleService.Compact", SNAPSHOT_LIFECYCLE)
    RunMaintenance = not_built("LifecycleService.RunMaintenance", SNAPSHOT_LIFECYCLE)
    Export = not_built("LifecycleService.Export", SNAPSHOT_LIFECYCLE)
    Import = not_built("LifecycleService.Import", SNAPSHOT_LIFECYCLE)
    Reembed = not_built("LifecycleService.Reembed", SNAPSHOT_LIFECYCLE)
