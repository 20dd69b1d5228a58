package dev.memoryd.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * What an agent run starts with: a token-budgeted view of its memory.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class SnapshotServiceGrpc {

  private SnapshotServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "memoryd.v1.SnapshotService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.BuildSnapshotRequest,
      dev.memoryd.v1.BuildSnapshotResponse> getBuildSnapshotMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "BuildSnapshot",
      requestType = dev.memoryd.v1.BuildSnapshotRequest.class,
      responseType = dev.memoryd.v1.BuildSnapshotResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.BuildSnapshotRequest,
      dev.memoryd.v1.BuildSnapshotResponse> getBuildSnapshotMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.BuildSnapshotRequest, dev.memoryd.v1.BuildSnapshotResponse> getBuildSnapshotMethod;
    if ((getBuildSnapshotMethod = SnapshotServiceGrpc.getBuildSnapshotMethod) == null) {
      synchronized (SnapshotServiceGrpc.class) {
        if ((getBuildSnapshotMethod = SnapshotServiceGrpc.getBuildSnapshotMethod) == null) {
          SnapshotServiceGrpc.getBuildSnapshotMethod = getBuildSnapshotMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.BuildSnapshotRequest, dev.memoryd.v1.BuildSnapshotResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "BuildSnapshot"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.BuildSnapshotRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.BuildSnapshotResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SnapshotServiceMethodDescriptorSupplier("BuildSnapshot"))
              .build();
        }
      }
    }
    return getBuildSnapshotMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.DefaultReadRequest,
      dev.memoryd.v1.DefaultReadResponse> getDefaultReadMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DefaultRead",
      requestType = dev.memoryd.v1.DefaultReadRequest.class,
      responseType = dev.memoryd.v1.DefaultReadResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.DefaultReadRequest,
      dev.memoryd.v1.DefaultReadResponse> getDefaultReadMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.DefaultReadRequest, dev.memoryd.v1.DefaultReadResponse> getDefaultReadMethod;
    if ((getDefaultReadMethod = SnapshotServiceGrpc.getDefaultReadMethod) == null) {
      synchronized (SnapshotServiceGrpc.class) {
        if ((getDefaultReadMethod = SnapshotServiceGrpc.getDefaultReadMethod) == null) {
          SnapshotServiceGrpc.getDefaultReadMethod = getDefaultReadMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.DefaultReadRequest, dev.memoryd.v1.DefaultReadResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DefaultRead"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.DefaultReadRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.DefaultReadResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SnapshotServiceMethodDescriptorSupplier("DefaultRead"))
              .build();
        }
      }
    }
    return getDefaultReadMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.SaveStateRequest,
      dev.memoryd.v1.SaveStateResponse> getSaveStateMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SaveState",
      requestType = dev.memoryd.v1.SaveStateRequest.class,
      responseType = dev.memoryd.v1.SaveStateResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.SaveStateRequest,
      dev.memoryd.v1.SaveStateResponse> getSaveStateMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.SaveStateRequest, dev.memoryd.v1.SaveStateResponse> getSaveStateMethod;
    if ((getSaveStateMethod = SnapshotServiceGrpc.getSaveStateMethod) == null) {
      synchronized (SnapshotServiceGrpc.class) {
        if ((getSaveStateMethod = SnapshotServiceGrpc.getSaveStateMethod) == null) {
          SnapshotServiceGrpc.getSaveStateMethod = getSaveStateMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.SaveStateRequest, dev.memoryd.v1.SaveStateResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SaveState"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.SaveStateRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.SaveStateResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SnapshotServiceMethodDescriptorSupplier("SaveState"))
              .build();
        }
      }
    }
    return getSaveStateMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.LoadStateRequest,
      dev.memoryd.v1.LoadStateResponse> getLoadStateMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "LoadState",
      requestType = dev.memoryd.v1.LoadStateRequest.class,
      responseType = dev.memoryd.v1.LoadStateResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.LoadStateRequest,
      dev.memoryd.v1.LoadStateResponse> getLoadStateMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.LoadStateRequest, dev.memoryd.v1.LoadStateResponse> getLoadStateMethod;
    if ((getLoadStateMethod = SnapshotServiceGrpc.getLoadStateMethod) == null) {
      synchronized (SnapshotServiceGrpc.class) {
        if ((getLoadStateMethod = SnapshotServiceGrpc.getLoadStateMethod) == null) {
          SnapshotServiceGrpc.getLoadStateMethod = getLoadStateMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.LoadStateRequest, dev.memoryd.v1.LoadStateResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "LoadState"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.LoadStateRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.LoadStateResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SnapshotServiceMethodDescriptorSupplier("LoadState"))
              .build();
        }
      }
    }
    return getLoadStateMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static SnapshotServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<SnapshotServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<SnapshotServiceStub>() {
        @java.lang.Override
        public SnapshotServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new SnapshotServiceStub(channel, callOptions);
        }
      };
    return SnapshotServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static SnapshotServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<SnapshotServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<SnapshotServiceBlockingV2Stub>() {
        @java.lang.Override
        public SnapshotServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new SnapshotServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return SnapshotServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static SnapshotServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<SnapshotServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<SnapshotServiceBlockingStub>() {
        @java.lang.Override
        public SnapshotServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new SnapshotServiceBlockingStub(channel, callOptions);
        }
      };
    return SnapshotServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static SnapshotServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<SnapshotServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<SnapshotServiceFutureStub>() {
        @java.lang.Override
        public SnapshotServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new SnapshotServiceFutureStub(channel, callOptions);
        }
      };
    return SnapshotServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * What an agent run starts with: a token-budgeted view of its memory.
   * </pre>
   */
  public interface AsyncService {

    /**
     */
    default void buildSnapshot(dev.memoryd.v1.BuildSnapshotRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.BuildSnapshotResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getBuildSnapshotMethod(), responseObserver);
    }

    /**
     * <pre>
     * Passive retrieval over keyed memory within a token limit.
     * </pre>
     */
    default void defaultRead(dev.memoryd.v1.DefaultReadRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.DefaultReadResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDefaultReadMethod(), responseObserver);
    }

    /**
     */
    default void saveState(dev.memoryd.v1.SaveStateRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.SaveStateResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSaveStateMethod(), responseObserver);
    }

    /**
     */
    default void loadState(dev.memoryd.v1.LoadStateRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.LoadStateResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getLoadStateMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service SnapshotService.
   * <pre>
   * What an agent run starts with: a token-budgeted view of its memory.
   * </pre>
   */
  public static abstract class SnapshotServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return SnapshotServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service SnapshotService.
   * <pre>
   * What an agent run starts with: a token-budgeted view of its memory.
   * </pre>
   */
  public static final class SnapshotServiceStub
      extends io.grpc.stub.AbstractAsyncStub<SnapshotServiceStub> {
    private SnapshotServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected SnapshotServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new SnapshotServiceStub(channel, callOptions);
    }

    /**
     */
    public void buildSnapshot(dev.memoryd.v1.BuildSnapshotRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.BuildSnapshotResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getBuildSnapshotMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Passive retrieval over keyed memory within a token limit.
     * </pre>
     */
    public void defaultRead(dev.memoryd.v1.DefaultReadRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.DefaultReadResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDefaultReadMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void saveState(dev.memoryd.v1.SaveStateRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.SaveStateResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSaveStateMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void loadState(dev.memoryd.v1.LoadStateRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.LoadStateResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getLoadStateMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service SnapshotService.
   * <pre>
   * What an agent run starts with: a token-budgeted view of its memory.
   * </pre>
   */
  public static final class SnapshotServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<SnapshotServiceBlockingV2Stub> {
    private SnapshotServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected SnapshotServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new SnapshotServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     */
    public dev.memoryd.v1.BuildSnapshotResponse buildSnapshot(dev.memoryd.v1.BuildSnapshotRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getBuildSnapshotMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Passive retrieval over keyed memory within a token limit.
     * </pre>
     */
    public dev.memoryd.v1.DefaultReadResponse defaultRead(dev.memoryd.v1.DefaultReadRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDefaultReadMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.SaveStateResponse saveState(dev.memoryd.v1.SaveStateRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSaveStateMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.LoadStateResponse loadState(dev.memoryd.v1.LoadStateRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getLoadStateMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service SnapshotService.
   * <pre>
   * What an agent run starts with: a token-budgeted view of its memory.
   * </pre>
   */
  public static final class SnapshotServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<SnapshotServiceBlockingStub> {
    private SnapshotServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected SnapshotServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new SnapshotServiceBlockingStub(channel, callOptions);
    }

    /**
     */
    public dev.memoryd.v1.BuildSnapshotResponse buildSnapshot(dev.memoryd.v1.BuildSnapshotRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getBuildSnapshotMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Passive retrieval over keyed memory within a token limit.
     * </pre>
     */
    public dev.memoryd.v1.DefaultReadResponse defaultRead(dev.memoryd.v1.DefaultReadRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDefaultReadMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.SaveStateResponse saveState(dev.memoryd.v1.SaveStateRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSaveStateMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.LoadStateResponse loadState(dev.memoryd.v1.LoadStateRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getLoadStateMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service SnapshotService.
   * <pre>
   * What an agent run starts with: a token-budgeted view of its memory.
   * </pre>
   */
  public static final class SnapshotServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<SnapshotServiceFutureStub> {
    private SnapshotServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected SnapshotServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new SnapshotServiceFutureStub(channel, callOptions);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.BuildSnapshotResponse> buildSnapshot(
        dev.memoryd.v1.BuildSnapshotRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getBuildSnapshotMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Passive retrieval over keyed memory within a token limit.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.DefaultReadResponse> defaultRead(
        dev.memoryd.v1.DefaultReadRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDefaultReadMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.SaveStateResponse> saveState(
        dev.memoryd.v1.SaveStateRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSaveStateMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.LoadStateResponse> loadState(
        dev.memoryd.v1.LoadStateRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getLoadStateMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_BUILD_SNAPSHOT = 0;
  private static final int METHODID_DEFAULT_READ = 1;
  private static final int METHODID_SAVE_STATE = 2;
  private static final int METHODID_LOAD_STATE = 3;

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
        case METHODID_BUILD_SNAPSHOT:
          serviceImpl.buildSnapshot((dev.memoryd.v1.BuildSnapshotRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.BuildSnapshotResponse>) responseObserver);
          break;
        case METHODID_DEFAULT_READ:
          serviceImpl.defaultRead((dev.memoryd.v1.DefaultReadRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.DefaultReadResponse>) responseObserver);
          break;
        case METHODID_SAVE_STATE:
          serviceImpl.saveState((dev.memoryd.v1.SaveStateRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.SaveStateResponse>) responseObserver);
          break;
        case METHODID_LOAD_STATE:
          serviceImpl.loadState((dev.memoryd.v1.LoadStateRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.LoadStateResponse>) responseObserver);
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
        default:
          throw new AssertionError();
      }
    }
  }

  public static final io.grpc.ServerServiceDefinition bindService(AsyncService service) {
    return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
        .addMethod(
          getBuildSnapshotMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.BuildSnapshotRequest,
              dev.memoryd.v1.BuildSnapshotResponse>(
                service, METHODID_BUILD_SNAPSHOT)))
        .addMethod(
          getDefaultReadMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.DefaultReadRequest,
              dev.memoryd.v1.DefaultReadResponse>(
                service, METHODID_DEFAULT_READ)))
        .addMethod(
          getSaveStateMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.SaveStateRequest,
              dev.memoryd.v1.SaveStateResponse>(
                service, METHODID_SAVE_STATE)))
        .addMethod(
          getLoadStateMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.LoadStateRequest,
              dev.memoryd.v1.LoadStateResponse>(
                service, METHODID_LOAD_STATE)))
        .build();
  }

  private static abstract class SnapshotServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    SnapshotServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.memoryd.v1.SnapshotServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("SnapshotService");
    }
  }

  private static final class SnapshotServiceFileDescriptorSupplier
      extends SnapshotServiceBaseDescriptorSupplier {
    SnapshotServiceFileDescriptorSupplier() {}
  }

  private static final class SnapshotServiceMethodDescriptorSupplier
      extends SnapshotServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    SnapshotServiceMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (SnapshotServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new SnapshotServiceFileDescriptorSupplier())
              .addMethod(getBuildSnapshotMethod())
              .addMethod(getDefaultReadMethod())
              .addMethod(getSaveStateMethod())
              .addMethod(getLoadStateMethod())
              .build();
        }
      }
    }
    return result;
  }
}
