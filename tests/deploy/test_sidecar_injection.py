"""Sidecar mode as an agent's chart uses it: a parent chart with memoryd as a dependency
puts memoryd into its own pod with the memoryd.sidecar.* templates."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.kube import (
    CHART,
    RELEASE,
    Manifest,
    container,
    is_custom_resource,
    kinds,
    load_settings,
    one,
    render_chart,
    schema_errors,
)

AGENT_STATEFULSET = """\
{{- $memoryd := dict "Values" .Values.memoryd "Release" .Release }}
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ .Release.Name }}-agent
  labels:
    app.kubernetes.io/instance: {{ .Release.Name }}
spec:
  replicas: 2
  serviceName: {{ .Release.Name }}-agent
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
      annotations:
        {{- include "memoryd.sidecar.podAnnotations" $memoryd | nindent 8 }}
    spec:
      securityContext:
        fsGroup: 2000
      {{- if .Values.memoryd.sidecar.native }}
      initContainers:
        {{- include "memoryd.sidecar.container" $memoryd | nindent 8 }}
      {{- end }}
      containers:
        - name: agent
          image: registry.example/agent:1.0
          env:
            {{- include "memoryd.sidecar.clientEnv" $memoryd | nindent 12 }}
          volumeMounts:
            {{- include "memoryd.sidecar.clientVolumeMount" $memoryd | nindent 12 }}
        {{- if not .Values.memoryd.sidecar.native }}
        {{- include "memoryd.sidecar.container" $memoryd | nindent 8 }}
        {{- end }}
      volumes:
        {{- include "memoryd.sidecar.volumes" $memoryd | nindent 8 }}
  {{- if .Values.memoryd.sidecar.persistence.volumeClaimTemplate }}
  volumeClaimTemplates:
    {{- include "memoryd.sidecar.volumeClaimTemplate" $memoryd | nindent 4 }}
  {{- end }}
"""


@pytest.fixture(scope="module")
def agent_chart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("agent-chart") / "agent"
    (root / "templates").mkdir(parents=True)
    (root / "Chart.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v2",
                "name": "agent",
                "version": "1.0.0",
                "dependencies": [{"name": "memoryd", "version": "0.1.0"}],
            }
        )
    )
    (root / "values.yaml").write_text("memoryd:\n  mode: sidecar\n")
    (root / "templates" / "agent.yaml").write_text(AGENT_STATEFULSET)
    shutil.copytree(CHART, root / "charts" / "memoryd")
    return root


def render_agent(chart: Path, memoryd: dict[str, Any]) -> list[Manifest]:
    return render_chart({"memoryd": {"mode": "sidecar", **memoryd}}, chart_dir=chart)


def pod_of(manifests: list[Manifest]) -> dict[str, Any]:
    spec: dict[str, Any] = one(manifests, "StatefulSet")["spec"]["template"]["spec"]
    return spec


def test_native_sidecar_with_a_claim(agent_chart: Path, tmp_path: Path) -> None:
    manifests = render_agent(agent_chart, {"sidecar": {"persistence": {"existingClaim": "mem"}}})
    assert [schema_errors(m.doc) for m in manifests if not is_custom_resource(m.doc)] == [
        None
    ] * len(manifests)
    # Only the ConfigMap comes from memoryd itself: no Service, no workload of its own.
    assert sorted(kinds(manifests)) == ["ConfigMap", "StatefulSet"]
    config_map = one(manifests, "ConfigMap")
    pod = pod_of(manifests)

    memoryd = container(pod, "memoryd")
    assert [c["name"] for c in pod["initContainers"]] == ["memoryd"]
    assert memoryd["restartPolicy"] == "Always"
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        command = memoryd[probe]["exec"]["command"]
        assert command[0] == "memoryd-healthcheck"
        assert command[command.index("--address") + 1] == "unix:/run/memoryd/memoryd.sock"
    assert memoryd["securityContext"]["runAsNonRoot"] is True
    assert memoryd["securityContext"]["readOnlyRootFilesystem"] is True
    assert "ports" in memoryd and memoryd["ports"][0]["containerPort"] == 9464

    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["memoryd-socket"]["emptyDir"]["medium"] == "Memory"
    assert volumes["memoryd-config"]["configMap"]["name"] == config_map["metadata"]["name"]
    assert volumes["memoryd-data"]["persistentVolumeClaim"]["claimName"] == "mem"
    mounts = {m["name"]: m["mountPath"] for m in memoryd["volumeMounts"]}
    assert mounts["memoryd-socket"] == "/run/memoryd"
    assert mounts["memoryd-data"] == "/var/lib/memoryd"

    agent = container(pod, "agent")
    assert agent["env"] == [{"name": "MEMORYD_ADDRESS", "value": "unix:/run/memoryd/memoryd.sock"}]
    # The live memory_root: memoryd writes it (its default: <data_dir>/memory_root),
    # the agent reads it read-only from the data volume.
    assert agent["volumeMounts"] == [
        {"name": "memoryd-socket", "mountPath": "/run/memoryd"},
        {
            "name": "memoryd-data",
            "mountPath": "/memory",
            "readOnly": True,
            "subPath": "memory_root",
        },
    ]

    config = yaml.safe_load(config_map["data"]["config.yaml"])
    assert config["listen"] == "unix:/run/memoryd/memoryd.sock"
    assert "keys" not in config
    settings = load_settings(config, tmp_path)
    assert settings.memory_root() == Path("/var/lib/memoryd/memory_root")
    annotation = one(manifests, "StatefulSet")["spec"]["template"]["metadata"]["annotations"]
    assert len(annotation["checksum/memoryd-config"]) == 64


def test_classic_sidecar_with_claim_templates(agent_chart: Path) -> None:
    manifests = render_agent(
        agent_chart,
        {
            "sidecar": {
                "native": False,
                "socketDir": "/sockets",
                "persistence": {"volumeClaimTemplate": True, "size": "2Gi"},
            }
        },
    )
    assert all(schema_errors(m.doc) is None for m in manifests)
    sts = one(manifests, "StatefulSet")
    pod = sts["spec"]["template"]["spec"]
    assert "initContainers" not in pod
    memoryd = container(pod, "memoryd")
    assert "restartPolicy" not in memoryd  # only valid on init containers
    assert [c["name"] for c in pod["containers"]] == ["agent", "memoryd"]
    assert "memoryd-data" not in {v["name"] for v in pod["volumes"]}
    (claim,) = sts["spec"]["volumeClaimTemplates"]
    assert claim["metadata"]["name"] == "memoryd-data"
    assert claim["spec"]["resources"]["requests"]["storage"] == "2Gi"
    assert container(pod, "agent")["env"][0]["value"] == "unix:/sockets/memoryd.sock"


def test_names_follow_the_release(agent_chart: Path) -> None:
    manifests = render_agent(agent_chart, {"fullnameOverride": "mem"})
    assert one(manifests, "ConfigMap")["metadata"]["name"] == "mem-config"
    volumes = {v["name"]: v for v in pod_of(manifests)["volumes"]}
    assert volumes["memoryd-config"]["configMap"]["name"] == "mem-config"
    default = render_agent(agent_chart, {})
    assert one(default, "ConfigMap")["metadata"]["name"] == f"{RELEASE}-memoryd-config"


def test_memory_root_of_one_agent_or_none(agent_chart: Path, tmp_path: Path) -> None:
    """The agent's own tree at /memory (subPath memory_root/<tenant>/<agent> of the data
    volume), so `ls /memory/index/user/calendar/` works; or no memory_root at all
    (enabled false: keys.mirror false, nothing mounted)."""
    for agent, tenant in (("planner", "acme"), ("助手:1", "default")):
        values = {"principal": {"tenantId": tenant}, "sidecar": {"memoryRoot": {"agent": agent}}}
        mounts = container(pod_of(render_agent(agent_chart, values)), "agent")["volumeMounts"]
        assert mounts[1] == {
            "name": "memoryd-data",
            "mountPath": "/memory",
            "readOnly": True,
            "subPath": f"memory_root/{tenant}/{agent}",
        }
    manifests = render_agent(agent_chart, {"sidecar": {"memoryRoot": {"enabled": False}}})
    pod = pod_of(manifests)
    assert [m["name"] for m in container(pod, "agent")["volumeMounts"]] == ["memoryd-socket"]
    config = yaml.safe_load(one(manifests, "ConfigMap")["data"]["config.yaml"])
    assert config["keys"] == {"mirror": False}
    assert load_settings(config, tmp_path).memory_root() is None
