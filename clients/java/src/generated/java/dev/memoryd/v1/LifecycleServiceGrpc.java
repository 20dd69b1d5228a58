package dev.memoryd.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * Stats, retention, maintenance, backup / restore / migration and re-embedding.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class LifecycleServiceGrpc {

  private LifecycleServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "memoryd.v1.LifecycleService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.GetStatsRequest,
      dev.memoryd.v1.GetStatsResponse> getGetStatsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetStats",
      requestType = dev.memoryd.v1.GetStatsRequest.class,
      responseType = dev.memoryd.v1.GetStatsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.GetStatsRequest,
      dev.memoryd.v1.GetStatsResponse> getGetStatsMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.GetStatsRequest, dev.memoryd.v1.GetStatsResponse> getGetStatsMethod;
    if ((getGetStatsMethod = LifecycleServiceGrpc.getGetStatsMethod) == null) {
      synchronized (LifecycleServiceGrpc.class) {
        if ((getGetStatsMethod = LifecycleServiceGrpc.getGetStatsMethod) == null) {
          LifecycleServiceGrpc.getGetStatsMethod = getGetStatsMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.GetStatsRequest, dev.memoryd.v1.GetStatsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetStats"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetStatsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetStatsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LifecycleServiceMethodDescriptorSupplier("GetStats"))
              .build();
        }
      }
    }
    return getGetStatsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.ArchiveRequest,
      dev.memoryd.v1.ArchiveResponse> getArchiveMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Archive",
      requestType = dev.memoryd.v1.ArchiveRequest.class,
      responseType = dev.memoryd.v1.ArchiveResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.ArchiveRequest,
      dev.memoryd.v1.ArchiveResponse> getArchiveMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.ArchiveRequest, dev.memoryd.v1.ArchiveResponse> getArchiveMethod;
    if ((getArchiveMethod = LifecycleServiceGrpc.getArchiveMethod) == null) {
      synchronized (LifecycleServiceGrpc.class) {
        if ((getArchiveMethod = LifecycleServiceGrpc.getArchiveMethod) == null) {
          LifecycleServiceGrpc.getArchiveMethod = getArchiveMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.ArchiveRequest, dev.memoryd.v1.ArchiveResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Archive"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ArchiveRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ArchiveResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LifecycleServiceMethodDescriptorSupplier("Archive"))
              .build();
        }
      }
    }
    return getArchiveMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.RestoreRequest,
      dev.memoryd.v1.RestoreResponse> getRestoreMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Restore",
      requestType = dev.memoryd.v1.RestoreRequest.class,
      responseType = dev.memoryd.v1.RestoreResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.RestoreRequest,
      dev.memoryd.v1.RestoreResponse> getRestoreMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.RestoreRequest, dev.memoryd.v1.RestoreResponse> getRestoreMethod;
    if ((getRestoreMethod = LifecycleServiceGrpc.getRestoreMethod) == null) {
      synchronized (LifecycleServiceGrpc.class) {
        if ((getRestoreMethod = LifecycleServiceGrpc.getRestoreMethod) == null) {
          LifecycleServiceGrpc.getRestoreMethod = getRestoreMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.RestoreRequest, dev.memoryd.v1.RestoreResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Restore"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.RestoreRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.RestoreResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LifecycleServiceMethodDescriptorSupplier("Restore"))
              .build();
        }
      }
    }
    return getRestoreMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.PruneRequest,
      dev.memoryd.v1.PruneResponse> getPruneMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Prune",
      requestType = dev.memoryd.v1.PruneRequest.class,
      responseType = dev.memoryd.v1.PruneResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.PruneRequest,
      dev.memoryd.v1.PruneResponse> getPruneMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.PruneRequest, dev.memoryd.v1.PruneResponse> getPruneMethod;
    if ((getPruneMethod = LifecycleServiceGrpc.getPruneMethod) == null) {
      synchronized (LifecycleServiceGrpc.class) {
        if ((getPruneMethod = LifecycleServiceGrpc.getPruneMethod) == null) {
          LifecycleServiceGrpc.getPruneMethod = getPruneMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.PruneRequest, dev.memoryd.v1.PruneResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Prune"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.PruneRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.PruneResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LifecycleServiceMethodDescriptorSupplier("Prune"))
              .build();
        }
      }
    }
    return getPruneMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.ResetRequest,
      dev.memoryd.v1.ResetResponse> getResetMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Reset",
      requestType = dev.memoryd.v1.ResetRequest.class,
      responseType = dev.memoryd.v1.ResetResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.ResetRequest,
      dev.memoryd.v1.ResetResponse> getResetMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.ResetRequest, dev.memoryd.v1.ResetResponse> getResetMethod;
    if ((getResetMethod = LifecycleServiceGrpc.getResetMethod) == null) {
      synchronized (LifecycleServiceGrpc.class) {
        if ((getResetMethod = LifecycleServiceGrpc.getResetMethod) == null) {
          LifecycleServiceGrpc.getResetMethod = getResetMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.ResetRequest, dev.memoryd.v1.ResetResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Reset"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ResetRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ResetResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LifecycleServiceMethodDescriptorSupplier("Reset"))
              .build();
        }
      }
    }
    return getResetMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.CompactRequest,
      dev.memoryd.v1.CompactResponse> getCompactMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Compact",
      requestType = dev.memoryd.v1.CompactRequest.class,
      responseType = dev.memoryd.v1.CompactResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.CompactRequest,
      dev.memoryd.v1.CompactResponse> getCompactMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.CompactRequest, dev.memoryd.v1.CompactResponse> getCompactMethod;
    if ((getCompactMethod = LifecycleServiceGrpc.getCompactMethod) == null) {
      synchronized (LifecycleServiceGrpc.class) {
        if ((getCompactMethod = LifecycleServiceGrpc.getCompactMethod) == null) {
          LifecycleServiceGrpc.getCompactMethod = getCompactMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.CompactRequest, dev.memoryd.v1.CompactResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Compact"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.CompactRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.CompactResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LifecycleServiceMethodDescriptorSupplier("Compact"))
              .build();
        }
      }
    }
    return getCompactMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.RunMaintenanceRequest,
      dev.memoryd.v1.RunMaintenanceResponse> getRunMaintenanceMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "RunMaintenance",
      requestType = dev.memoryd.v1.RunMaintenanceRequest.class,
      responseType = dev.memoryd.v1.RunMaintenanceResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.RunMaintenanceRequest,
      dev.memoryd.v1.RunMaintenanceResponse> getRunMaintenanceMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.RunMaintenanceRequest, dev.memoryd.v1.RunMaintenanceResponse> getRunMaintenanceMethod;
    if ((getRunMaintenanceMethod = LifecycleServiceGrpc.getRunMaintenanceMethod) == null) {
      synchronized (LifecycleServiceGrpc.class) {
        if ((getRunMaintenanceMethod = LifecycleServiceGrpc.getRunMaintenanceMethod) == null) {
          LifecycleServiceGrpc.getRunMaintenanceMethod = getRunMaintenanceMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.RunMaintenanceRequest, dev.memoryd.v1.RunMaintenanceResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "RunMaintenance"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.RunMaintenanceRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.RunMaintenanceResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LifecycleServiceMethodDescriptorSupplier("RunMaintenance"))
              .build();
        }
      }
    }
    return getRunMaintenanceMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.ConsolidateRequest,
      dev.memoryd.v1.ConsolidateResponse> getConsolidateMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Consolidate",
      requestType = dev.memoryd.v1.ConsolidateRequest.class,
      responseType = dev.memoryd.v1.ConsolidateResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.ConsolidateRequest,
      dev.memoryd.v1.ConsolidateResponse> getConsolidateMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.ConsolidateRequest, dev.memoryd.v1.ConsolidateResponse> getConsolidateMethod;
    if ((getConsolidateMethod = LifecycleServiceGrpc.getConsolidateMethod) == null) {
      synchronized (LifecycleServiceGrpc.class) {
        if ((getConsolidateMethod = LifecycleServiceGrpc.getConsolidateMethod) == null) {
          LifecycleServiceGrpc.getConsolidateMethod = getConsolidateMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.ConsolidateRequest, dev.memoryd.v1.ConsolidateResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Consolidate"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ConsolidateRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ConsolidateResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LifecycleServiceMethodDescriptorSupplier("Consolidate"))
              .build();
        }
      }
    }
    return getConsolidateMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.ExportRequest,
      dev.memoryd.v1.ExportResponse> getExportMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Export",
      requestType = dev.memoryd.v1.ExportRequest.class,
      responseType = dev.memoryd.v1.ExportResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.ExportRequest,
      dev.memoryd.v1.ExportResponse> getExportMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.ExportRequest, dev.memoryd.v1.ExportResponse> getExportMethod;
    if ((getExportMethod = LifecycleServiceGrpc.getExportMethod) == null) {
      synchronized (LifecycleServiceGrpc.class) {
        if ((getExportMethod = LifecycleServiceGrpc.getExportMethod) == null) {
          LifecycleServiceGrpc.getExportMethod = getExportMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.ExportRequest, dev.memoryd.v1.ExportResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Export"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ExportRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ExportResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LifecycleServiceMethodDescriptorSupplier("Export"))
              .build();
        }
      }
    }
    return getExportMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.ImportRequest,
      dev.memoryd.v1.ImportResponse> getImportMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Import",
      requestType = dev.memoryd.v1.ImportRequest.class,
      responseType = dev.memoryd.v1.ImportResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.CLIENT_STREAMING)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.ImportRequest,
      dev.memoryd.v1.ImportResponse> getImportMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.ImportRequest, dev.memoryd.v1.ImportResponse> getImportMethod;
    if ((getImportMethod = LifecycleServiceGrpc.getImportMethod) == null) {
      synchronized (LifecycleServiceGrpc.class) {
        if ((getImportMethod = LifecycleServiceGrpc.getImportMethod) == null) {
          LifecycleServiceGrpc.getImportMethod = getImportMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.ImportRequest, dev.memoryd.v1.ImportResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.CLIENT_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Import"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ImportRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ImportResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LifecycleServiceMethodDescriptorSupplier("Import"))
              .build();
        }
      }
    }
    return getImportMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.ReembedRequest,
      dev.memoryd.v1.ReembedResponse> getReembedMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Reembed",
      requestType = dev.memoryd.v1.ReembedRequest.class,
      responseType = dev.memoryd.v1.ReembedResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.ReembedRequest,
      dev.memoryd.v1.ReembedResponse> getReembedMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.ReembedRequest, dev.memoryd.v1.ReembedResponse> getReembedMethod;
    if ((getReembedMethod = LifecycleServiceGrpc.getReembedMethod) == null) {
      synchronized (LifecycleServiceGrpc.class) {
        if ((getReembedMethod = LifecycleServiceGrpc.getReembedMethod) == null) {
          LifecycleServiceGrpc.getReembedMethod = getReembedMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.ReembedRequest, dev.memoryd.v1.ReembedResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Reembed"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ReembedRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ReembedResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LifecycleServiceMethodDescriptorSupplier("Reembed"))
              .build();
        }
      }
    }
    return getReembedMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.EraseRequest,
      dev.memoryd.v1.EraseResponse> getEraseMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Erase",
      requestType = dev.memoryd.v1.EraseRequest.class,
      responseType = dev.memoryd.v1.EraseResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.EraseRequest,
      dev.memoryd.v1.EraseResponse> getEraseMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.EraseRequest, dev.memoryd.v1.EraseResponse> getEraseMethod;
    if ((getEraseMethod = LifecycleServiceGrpc.getEraseMethod) == null) {
      synchronized (LifecycleServiceGrpc.class) {
        if ((getEraseMethod = LifecycleServiceGrpc.getEraseMethod) == null) {
          LifecycleServiceGrpc.getEraseMethod = getEraseMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.EraseRequest, dev.memoryd.v1.EraseResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Erase"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.EraseRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.EraseResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LifecycleServiceMethodDescriptorSupplier("Erase"))
              .build();
        }
      }
    }
    return getEraseMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.VerifyErasureRequest,
      dev.memoryd.v1.VerifyErasureResponse> getVerifyErasureMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "VerifyErasure",
      requestType = dev.memoryd.v1.VerifyErasureRequest.class,
      responseType = dev.memoryd.v1.VerifyErasureResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.VerifyErasureRequest,
      dev.memoryd.v1.VerifyErasureResponse> getVerifyErasureMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.VerifyErasureRequest, dev.memoryd.v1.VerifyErasureResponse> getVerifyErasureMethod;
    if ((getVerifyErasureMethod = LifecycleServiceGrpc.getVerifyErasureMethod) == null) {
      synchronized (LifecycleServiceGrpc.class) {
        if ((getVerifyErasureMethod = LifecycleServiceGrpc.getVerifyErasureMethod) == null) {
          LifecycleServiceGrpc.getVerifyErasureMethod = getVerifyErasureMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.VerifyErasureRequest, dev.memoryd.v1.VerifyErasureResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "VerifyErasure"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.VerifyErasureRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.VerifyErasureResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LifecycleServiceMethodDescriptorSupplier("VerifyErasure"))
              .build();
        }
      }
    }
    return getVerifyErasureMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static LifecycleServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<LifecycleServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<LifecycleServiceStub>() {
        @java.lang.Override
        public LifecycleServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new LifecycleServiceStub(channel, callOptions);
        }
      };
    return LifecycleServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static LifecycleServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<LifecycleServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<LifecycleServiceBlockingV2Stub>() {
        @java.lang.Override
        public LifecycleServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new LifecycleServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return LifecycleServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static LifecycleServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<LifecycleServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<LifecycleServiceBlockingStub>() {
        @java.lang.Override
        public LifecycleServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new LifecycleServiceBlockingStub(channel, callOptions);
        }
      };
    return LifecycleServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static LifecycleServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<LifecycleServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<LifecycleServiceFutureStub>() {
        @java.lang.Override
        public LifecycleServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new LifecycleServiceFutureStub(channel, callOptions);
        }
      };
    return LifecycleServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * Stats, retention, maintenance, backup / restore / migration and re-embedding.
   * </pre>
   */
  public interface AsyncService {

    /**
     */
    default void getStats(dev.memoryd.v1.GetStatsRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetStatsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetStatsMethod(), responseObserver);
    }

    /**
     */
    default void archive(dev.memoryd.v1.ArchiveRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ArchiveResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getArchiveMethod(), responseObserver);
    }

    /**
     */
    default void restore(dev.memoryd.v1.RestoreRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.RestoreResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRestoreMethod(), responseObserver);
    }

    /**
     * <pre>
     * Deletes memories matching criteria (admin); dry_run reports what would go.
     * </pre>
     */
    default void prune(dev.memoryd.v1.PruneRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.PruneResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getPruneMethod(), responseObserver);
    }

    /**
     * <pre>
     * Deletes everything of one agent (admin).
     * </pre>
     */
    default void reset(dev.memoryd.v1.ResetRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ResetResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getResetMethod(), responseObserver);
    }

    /**
     */
    default void compact(dev.memoryd.v1.CompactRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.CompactResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCompactMethod(), responseObserver);
    }

    /**
     */
    default void runMaintenance(dev.memoryd.v1.RunMaintenanceRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.RunMaintenanceResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRunMaintenanceMethod(), responseObserver);
    }

    /**
     * <pre>
     * Condenses groups of related older memories into derived ones; the originals are
     * archived with links, restorable (Restore with undo_consolidation).
     * </pre>
     */
    default void consolidate(dev.memoryd.v1.ConsolidateRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ConsolidateResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getConsolidateMethod(), responseObserver);
    }

    /**
     * <pre>
     * Every record of an agent (or, for admins, the tenant), JSONL-compatible.
     * </pre>
     */
    default void export(dev.memoryd.v1.ExportRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ExportResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getExportMethod(), responseObserver);
    }

    /**
     * <pre>
     * Idempotent by id and version.
     * </pre>
     */
    default io.grpc.stub.StreamObserver<dev.memoryd.v1.ImportRequest> import_(
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ImportResponse> responseObserver) {
      return io.grpc.stub.ServerCalls.asyncUnimplementedStreamingCall(getImportMethod(), responseObserver);
    }

    /**
     * <pre>
     * Re-embeds memories whose model differs from the configured one.
     * </pre>
     */
    default void reembed(dev.memoryd.v1.ReembedRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ReembedResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getReembedMethod(), responseObserver);
    }

    /**
     * <pre>
     * Removes every copy of an agent's data, or of some of its memories: store rows
     * and their old versions, records, files, log segments (admin; docs/erasure.md).
     * </pre>
     */
    default void erase(dev.memoryd.v1.EraseRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.EraseResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getEraseMethod(), responseObserver);
    }

    /**
     * <pre>
     * Files of the data directory that still hold any of the given strings (admin;
     * where tenants share the files, only the caller's tenant's folders).
     * </pre>
     */
    default void verifyErasure(dev.memoryd.v1.VerifyErasureRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.VerifyErasureResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getVerifyErasureMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service LifecycleService.
   * <pre>
   * Stats, retention, maintenance, backup / restore / migration and re-embedding.
   * </pre>
   */
  public static abstract class LifecycleServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return LifecycleServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service LifecycleService.
   * <pre>
   * Stats, retention, maintenance, backup / restore / migration and re-embedding.
   * </pre>
   */
  public static final class LifecycleServiceStub
      extends io.grpc.stub.AbstractAsyncStub<LifecycleServiceStub> {
    private LifecycleServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected LifecycleServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new LifecycleServiceStub(channel, callOptions);
    }

    /**
     */
    public void getStats(dev.memoryd.v1.GetStatsRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetStatsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetStatsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void archive(dev.memoryd.v1.ArchiveRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ArchiveResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getArchiveMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void restore(dev.memoryd.v1.RestoreRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.RestoreResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRestoreMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Deletes memories matching criteria (admin); dry_run reports what would go.
     * </pre>
     */
    public void prune(dev.memoryd.v1.PruneRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.PruneResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getPruneMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Deletes everything of one agent (admin).
     * </pre>
     */
    public void reset(dev.memoryd.v1.ResetRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ResetResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getResetMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void compact(dev.memoryd.v1.CompactRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.CompactResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncServerStreamingCall(
          getChannel().newCall(getCompactMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void runMaintenance(dev.memoryd.v1.RunMaintenanceRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.RunMaintenanceResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncServerStreamingCall(
          getChannel().newCall(getRunMaintenanceMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Condenses groups of related older memories into derived ones; the originals are
     * archived with links, restorable (Restore with undo_consolidation).
     * </pre>
     */
    public void consolidate(dev.memoryd.v1.ConsolidateRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ConsolidateResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncServerStreamingCall(
          getChannel().newCall(getConsolidateMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Every record of an agent (or, for admins, the tenant), JSONL-compatible.
     * </pre>
     */
    public void export(dev.memoryd.v1.ExportRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ExportResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncServerStreamingCall(
          getChannel().newCall(getExportMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Idempotent by id and version.
     * </pre>
     */
    public io.grpc.stub.StreamObserver<dev.memoryd.v1.ImportRequest> import_(
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ImportResponse> responseObserver) {
      return io.grpc.stub.ClientCalls.asyncClientStreamingCall(
          getChannel().newCall(getImportMethod(), getCallOptions()), responseObserver);
    }

    /**
     * <pre>
     * Re-embeds memories whose model differs from the configured one.
     * </pre>
     */
    public void reembed(dev.memoryd.v1.ReembedRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ReembedResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncServerStreamingCall(
          getChannel().newCall(getReembedMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Removes every copy of an agent's data, or of some of its memories: store rows
     * and their old versions, records, files, log segments (admin; docs/erasure.md).
     * </pre>
     */
    public void erase(dev.memoryd.v1.EraseRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.EraseResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getEraseMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Files of the data directory that still hold any of the given strings (admin;
     * where tenants share the files, only the caller's tenant's folders).
     * </pre>
     */
    public void verifyErasure(dev.memoryd.v1.VerifyErasureRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.VerifyErasureResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getVerifyErasureMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service LifecycleService.
   * <pre>
   * Stats, retention, maintenance, backup / restore / migration and re-embedding.
   * </pre>
   */
  public static final class LifecycleServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<LifecycleServiceBlockingV2Stub> {
    private LifecycleServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected LifecycleServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new LifecycleServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     */
    public dev.memoryd.v1.GetStatsResponse getStats(dev.memoryd.v1.GetStatsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetStatsMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.ArchiveResponse archive(dev.memoryd.v1.ArchiveRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getArchiveMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.RestoreResponse restore(dev.memoryd.v1.RestoreRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getRestoreMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes memories matching criteria (admin); dry_run reports what would go.
     * </pre>
     */
    public dev.memoryd.v1.PruneResponse prune(dev.memoryd.v1.PruneRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getPruneMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes everything of one agent (admin).
     * </pre>
     */
    public dev.memoryd.v1.ResetResponse reset(dev.memoryd.v1.ResetRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getResetMethod(), getCallOptions(), request);
    }

    /**
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<?, dev.memoryd.v1.CompactResponse>
        compact(dev.memoryd.v1.CompactRequest request) {
      return io.grpc.stub.ClientCalls.blockingV2ServerStreamingCall(
          getChannel(), getCompactMethod(), getCallOptions(), request);
    }

    /**
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<?, dev.memoryd.v1.RunMaintenanceResponse>
        runMaintenance(dev.memoryd.v1.RunMaintenanceRequest request) {
      return io.grpc.stub.ClientCalls.blockingV2ServerStreamingCall(
          getChannel(), getRunMaintenanceMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Condenses groups of related older memories into derived ones; the originals are
     * archived with links, restorable (Restore with undo_consolidation).
     * </pre>
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<?, dev.memoryd.v1.ConsolidateResponse>
        consolidate(dev.memoryd.v1.ConsolidateRequest request) {
      return io.grpc.stub.ClientCalls.blockingV2ServerStreamingCall(
          getChannel(), getConsolidateMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Every record of an agent (or, for admins, the tenant), JSONL-compatible.
     * </pre>
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<?, dev.memoryd.v1.ExportResponse>
        export(dev.memoryd.v1.ExportRequest request) {
      return io.grpc.stub.ClientCalls.blockingV2ServerStreamingCall(
          getChannel(), getExportMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Idempotent by id and version.
     * </pre>
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<dev.memoryd.v1.ImportRequest, dev.memoryd.v1.ImportResponse>
        import_() {
      return io.grpc.stub.ClientCalls.blockingClientStreamingCall(
          getChannel(), getImportMethod(), getCallOptions());
    }

    /**
     * <pre>
     * Re-embeds memories whose model differs from the configured one.
     * </pre>
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<?, dev.memoryd.v1.ReembedResponse>
        reembed(dev.memoryd.v1.ReembedRequest request) {
      return io.grpc.stub.ClientCalls.blockingV2ServerStreamingCall(
          getChannel(), getReembedMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Removes every copy of an agent's data, or of some of its memories: store rows
     * and their old versions, records, files, log segments (admin; docs/erasure.md).
     * </pre>
     */
    public dev.memoryd.v1.EraseResponse erase(dev.memoryd.v1.EraseRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getEraseMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Files of the data directory that still hold any of the given strings (admin;
     * where tenants share the files, only the caller's tenant's folders).
     * </pre>
     */
    public dev.memoryd.v1.VerifyErasureResponse verifyErasure(dev.memoryd.v1.VerifyErasureRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getVerifyErasureMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service LifecycleService.
   * <pre>
   * Stats, retention, maintenance, backup / restore / migration and re-embedding.
   * </pre>
   */
  public static final class LifecycleServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<LifecycleServiceBlockingStub> {
    private LifecycleServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected LifecycleServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new LifecycleServiceBlockingStub(channel, callOptions);
    }

    /**
     */
    public dev.memoryd.v1.GetStatsResponse getStats(dev.memoryd.v1.GetStatsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetStatsMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.ArchiveResponse archive(dev.memoryd.v1.ArchiveRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getArchiveMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.RestoreResponse restore(dev.memoryd.v1.RestoreRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRestoreMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes memories matching criteria (admin); dry_run reports what would go.
     * </pre>
     */
    public dev.memoryd.v1.PruneResponse prune(dev.memoryd.v1.PruneRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getPruneMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes everything of one agent (admin).
     * </pre>
     */
    public dev.memoryd.v1.ResetResponse reset(dev.memoryd.v1.ResetRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getResetMethod(), getCallOptions(), request);
    }

    /**
     */
    public java.util.Iterator<dev.memoryd.v1.CompactResponse> compact(
        dev.memoryd.v1.CompactRequest request) {
      return io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          getChannel(), getCompactMethod(), getCallOptions(), request);
    }

    /**
     */
    public java.util.Iterator<dev.memoryd.v1.RunMaintenanceResponse> runMaintenance(
        dev.memoryd.v1.RunMaintenanceRequest request) {
      return io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          getChannel(), getRunMaintenanceMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Condenses groups of related older memories into derived ones; the originals are
     * archived with links, restorable (Restore with undo_consolidation).
     * </pre>
     */
    public java.util.Iterator<dev.memoryd.v1.ConsolidateResponse> consolidate(
        dev.memoryd.v1.ConsolidateRequest request) {
      return io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          getChannel(), getConsolidateMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Every record of an agent (or, for admins, the tenant), JSONL-compatible.
     * </pre>
     */
    public java.util.Iterator<dev.memoryd.v1.ExportResponse> export(
        dev.memoryd.v1.ExportRequest request) {
      return io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          getChannel(), getExportMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Re-embeds memories whose model differs from the configured one.
     * </pre>
     */
    public java.util.Iterator<dev.memoryd.v1.ReembedResponse> reembed(
        dev.memoryd.v1.ReembedRequest request) {
      return io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          getChannel(), getReembedMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Removes every copy of an agent's data, or of some of its memories: store rows
     * and their old versions, records, files, log segments (admin; docs/erasure.md).
     * </pre>
     */
    public dev.memoryd.v1.EraseResponse erase(dev.memoryd.v1.EraseRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getEraseMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Files of the data directory that still hold any of the given strings (admin;
     * where tenants share the files, only the caller's tenant's folders).
     * </pre>
     */
    public dev.memoryd.v1.VerifyErasureResponse verifyErasure(dev.memoryd.v1.VerifyErasureRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getVerifyErasureMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service LifecycleService.
   * <pre>
   * Stats, retention, maintenance, backup / restore / migration and re-embedding.
   * </pre>
   */
  public static final class LifecycleServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<LifecycleServiceFutureStub> {
    private LifecycleServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected LifecycleServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new LifecycleServiceFutureStub(channel, callOptions);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.GetStatsResponse> getStats(
        dev.memoryd.v1.GetStatsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetStatsMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.ArchiveResponse> archive(
        dev.memoryd.v1.ArchiveRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getArchiveMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.RestoreResponse> restore(
        dev.memoryd.v1.RestoreRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRestoreMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Deletes memories matching criteria (admin); dry_run reports what would go.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.PruneResponse> prune(
        dev.memoryd.v1.PruneRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getPruneMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Deletes everything of one agent (admin).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.ResetResponse> reset(
        dev.memoryd.v1.ResetRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getResetMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Removes every copy of an agent's data, or of some of its memories: store rows
     * and their old versions, records, files, log segments (admin; docs/erasure.md).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.EraseResponse> erase(
        dev.memoryd.v1.EraseRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getEraseMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Files of the data directory that still hold any of the given strings (admin;
     * where tenants share the files, only the caller's tenant's folders).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.VerifyErasureResponse> verifyErasure(
        dev.memoryd.v1.VerifyErasureRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getVerifyErasureMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_GET_STATS = 0;
  private static final int METHODID_ARCHIVE = 1;
  private static final int METHODID_RESTORE = 2;
  private static final int METHODID_PRUNE = 3;
  private static final int METHODID_RESET = 4;
  private static final int METHODID_COMPACT = 5;
  private static final int METHODID_RUN_MAINTENANCE = 6;
  private static final int METHODID_CONSOLIDATE = 7;
  private static final int METHODID_EXPORT = 8;
  private static final int METHODID_REEMBED = 9;
  private static final int METHODID_ERASE = 10;
  private static final int METHODID_VERIFY_ERASURE = 11;
  private static final int METHODID_IMPORT = 12;

  private static final class MethodHandlers<Req, Resp> implements
      io.grpc.stub.ServerCalls.UnaryMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ServerStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ClientStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.BidiStreamingMethod<Req, Resp> {
    private final AsyncService serviceImpl;
    private final int methodId;

    MethodHandlers(AsyncService serviceImpl, int methodId) {
      this.serviceImpl = serviceImpl;
      this.methodId = methodId;
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public void invoke(Req request, io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        case METHODID_GET_STATS:
          serviceImpl.getStats((dev.memoryd.v1.GetStatsRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.GetStatsResponse>) responseObserver);
          break;
        case METHODID_ARCHIVE:
          serviceImpl.archive((dev.memoryd.v1.ArchiveRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.ArchiveResponse>) responseObserver);
          break;
        case METHODID_RESTORE:
          serviceImpl.restore((dev.memoryd.v1.RestoreRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.RestoreResponse>) responseObserver);
          break;
        case METHODID_PRUNE:
          serviceImpl.prune((dev.memoryd.v1.PruneRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.PruneResponse>) responseObserver);
          break;
        case METHODID_RESET:
          serviceImpl.reset((dev.memoryd.v1.ResetRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.ResetResponse>) responseObserver);
          break;
        case METHODID_COMPACT:
          serviceImpl.compact((dev.memoryd.v1.CompactRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.CompactResponse>) responseObserver);
          break;
        case METHODID_RUN_MAINTENANCE:
          serviceImpl.runMaintenance((dev.memoryd.v1.RunMaintenanceRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.RunMaintenanceResponse>) responseObserver);
          break;
        case METHODID_CONSOLIDATE:
          serviceImpl.consolidate((dev.memoryd.v1.ConsolidateRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.ConsolidateResponse>) responseObserver);
          break;
        case METHODID_EXPORT:
          serviceImpl.export((dev.memoryd.v1.ExportRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.ExportResponse>) responseObserver);
          break;
        case METHODID_REEMBED:
          serviceImpl.reembed((dev.memoryd.v1.ReembedRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.ReembedResponse>) responseObserver);
          break;
        case METHODID_ERASE:
          serviceImpl.erase((dev.memoryd.v1.EraseRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.EraseResponse>) responseObserver);
          break;
        case METHODID_VERIFY_ERASURE:
          serviceImpl.verifyErasure((dev.memoryd.v1.VerifyErasureRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.VerifyErasureResponse>) responseObserver);
          break;
        default:
          throw new AssertionError();
      }
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public io.grpc.stub.StreamObserver<Req> invoke(
        io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        case METHODID_IMPORT:
          return (io.grpc.stub.StreamObserver<Req>) serviceImpl.import_(
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.ImportResponse>) responseObserver);
        default:
          throw new AssertionError();
      }
    }
  }

  public static final io.grpc.ServerServiceDefinition bindService(AsyncService service) {
    return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
        .addMethod(
          getGetStatsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.GetStatsRequest,
              dev.memoryd.v1.GetStatsResponse>(
                service, METHODID_GET_STATS)))
        .addMethod(
          getArchiveMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.ArchiveRequest,
              dev.memoryd.v1.ArchiveResponse>(
                service, METHODID_ARCHIVE)))
        .addMethod(
          getRestoreMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.RestoreRequest,
              dev.memoryd.v1.RestoreResponse>(
                service, METHODID_RESTORE)))
        .addMethod(
          getPruneMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.PruneRequest,
              dev.memoryd.v1.PruneResponse>(
                service, METHODID_PRUNE)))
        .addMethod(
          getResetMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.ResetRequest,
              dev.memoryd.v1.ResetResponse>(
                service, METHODID_RESET)))
        .addMethod(
          getCompactMethod(),
          io.grpc.stub.ServerCalls.asyncServerStreamingCall(
            new MethodHandlers<
              dev.memoryd.v1.CompactRequest,
              dev.memoryd.v1.CompactResponse>(
                service, METHODID_COMPACT)))
        .addMethod(
          getRunMaintenanceMethod(),
          io.grpc.stub.ServerCalls.asyncServerStreamingCall(
            new MethodHandlers<
              dev.memoryd.v1.RunMaintenanceRequest,
              dev.memoryd.v1.RunMaintenanceResponse>(
                service, METHODID_RUN_MAINTENANCE)))
        .addMethod(
          getConsolidateMethod(),
          io.grpc.stub.ServerCalls.asyncServerStreamingCall(
            new MethodHandlers<
              dev.memoryd.v1.ConsolidateRequest,
              dev.memoryd.v1.ConsolidateResponse>(
                service, METHODID_CONSOLIDATE)))
        .addMethod(
          getExportMethod(),
          io.grpc.stub.ServerCalls.asyncServerStreamingCall(
            new MethodHandlers<
              dev.memoryd.v1.ExportRequest,
              dev.memoryd.v1.ExportResponse>(
                service, METHODID_EXPORT)))
        .addMethod(
          getImportMethod(),
          io.grpc.stub.ServerCalls.asyncClientStreamingCall(
            new MethodHandlers<
              dev.memoryd.v1.ImportRequest,
              dev.memoryd.v1.ImportResponse>(
                service, METHODID_IMPORT)))
        .addMethod(
          getReembedMethod(),
          io.grpc.stub.ServerCalls.asyncServerStreamingCall(
            new MethodHandlers<
              dev.memoryd.v1.ReembedRequest,
              dev.memoryd.v1.ReembedResponse>(
                service, METHODID_REEMBED)))
        .addMethod(
          getEraseMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.EraseRequest,
              dev.memoryd.v1.EraseResponse>(
                service, METHODID_ERASE)))
        .addMethod(
          getVerifyErasureMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.VerifyErasureRequest,
              dev.memoryd.v1.VerifyErasureResponse>(
                service, METHODID_VERIFY_ERASURE)))
        .build();
  }

  private static abstract class LifecycleServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    LifecycleServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.memoryd.v1.LifecycleServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("LifecycleService");
    }
  }

  private static final class LifecycleServiceFileDescriptorSupplier
      extends LifecycleServiceBaseDescriptorSupplier {
    LifecycleServiceFileDescriptorSupplier() {}
  }

  private static final class LifecycleServiceMethodDescriptorSupplier
      extends LifecycleServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    LifecycleServiceMethodDescriptorSupplier(java.lang.String methodName) {
      this.methodName = methodName;
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.MethodDescriptor getMethodDescriptor() {
      return getServiceDescriptor().findMethodByName(methodName);
    }
  }

  private static volatile io.grpc.ServiceDescriptor serviceDescriptor;

  public static io.grpc.ServiceDescriptor getServiceDescriptor() {
    io.grpc.ServiceDescriptor result = serviceDescriptor;
    if (result == null) {
      synchronized (LifecycleServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new LifecycleServiceFileDescriptorSupplier())
              .addMethod(getGetStatsMethod())
              .addMethod(getArchiveMethod())
              .addMethod(getRestoreMethod())
              .addMethod(getPruneMethod())
              .addMethod(getResetMethod())
              .addMethod(getCompactMethod())
              .addMethod(getRunMaintenanceMethod())
              .addMethod(getConsolidateMethod())
              .addMethod(getExportMethod())
              .addMethod(getImportMethod())
              .addMethod(getReembedMethod())
              .addMethod(getEraseMethod())
              .addMethod(getVerifyErasureMethod())
              .build();
        }
      }
    }
    return result;
  }
}
