package dev.memoryd.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * Long-term, keyed, working and short-term (session) memory of an agent.
 * The tenant always comes from the authenticated caller; agent_id names the agent.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class MemoryServiceGrpc {

  private MemoryServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "memoryd.v1.MemoryService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.RememberRequest,
      dev.memoryd.v1.RememberResponse> getRememberMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Remember",
      requestType = dev.memoryd.v1.RememberRequest.class,
      responseType = dev.memoryd.v1.RememberResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.RememberRequest,
      dev.memoryd.v1.RememberResponse> getRememberMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.RememberRequest, dev.memoryd.v1.RememberResponse> getRememberMethod;
    if ((getRememberMethod = MemoryServiceGrpc.getRememberMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getRememberMethod = MemoryServiceGrpc.getRememberMethod) == null) {
          MemoryServiceGrpc.getRememberMethod = getRememberMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.RememberRequest, dev.memoryd.v1.RememberResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Remember"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.RememberRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.RememberResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("Remember"))
              .build();
        }
      }
    }
    return getRememberMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.RememberBatchRequest,
      dev.memoryd.v1.RememberBatchResponse> getRememberBatchMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "RememberBatch",
      requestType = dev.memoryd.v1.RememberBatchRequest.class,
      responseType = dev.memoryd.v1.RememberBatchResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.RememberBatchRequest,
      dev.memoryd.v1.RememberBatchResponse> getRememberBatchMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.RememberBatchRequest, dev.memoryd.v1.RememberBatchResponse> getRememberBatchMethod;
    if ((getRememberBatchMethod = MemoryServiceGrpc.getRememberBatchMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getRememberBatchMethod = MemoryServiceGrpc.getRememberBatchMethod) == null) {
          MemoryServiceGrpc.getRememberBatchMethod = getRememberBatchMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.RememberBatchRequest, dev.memoryd.v1.RememberBatchResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "RememberBatch"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.RememberBatchRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.RememberBatchResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("RememberBatch"))
              .build();
        }
      }
    }
    return getRememberBatchMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.RecallRequest,
      dev.memoryd.v1.RecallResponse> getRecallMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Recall",
      requestType = dev.memoryd.v1.RecallRequest.class,
      responseType = dev.memoryd.v1.RecallResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.RecallRequest,
      dev.memoryd.v1.RecallResponse> getRecallMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.RecallRequest, dev.memoryd.v1.RecallResponse> getRecallMethod;
    if ((getRecallMethod = MemoryServiceGrpc.getRecallMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getRecallMethod = MemoryServiceGrpc.getRecallMethod) == null) {
          MemoryServiceGrpc.getRecallMethod = getRecallMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.RecallRequest, dev.memoryd.v1.RecallResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Recall"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.RecallRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.RecallResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("Recall"))
              .build();
        }
      }
    }
    return getRecallMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.GetMemoryRequest,
      dev.memoryd.v1.GetMemoryResponse> getGetMemoryMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetMemory",
      requestType = dev.memoryd.v1.GetMemoryRequest.class,
      responseType = dev.memoryd.v1.GetMemoryResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.GetMemoryRequest,
      dev.memoryd.v1.GetMemoryResponse> getGetMemoryMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.GetMemoryRequest, dev.memoryd.v1.GetMemoryResponse> getGetMemoryMethod;
    if ((getGetMemoryMethod = MemoryServiceGrpc.getGetMemoryMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getGetMemoryMethod = MemoryServiceGrpc.getGetMemoryMethod) == null) {
          MemoryServiceGrpc.getGetMemoryMethod = getGetMemoryMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.GetMemoryRequest, dev.memoryd.v1.GetMemoryResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetMemory"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetMemoryRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetMemoryResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("GetMemory"))
              .build();
        }
      }
    }
    return getGetMemoryMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.ListMemoriesRequest,
      dev.memoryd.v1.ListMemoriesResponse> getListMemoriesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListMemories",
      requestType = dev.memoryd.v1.ListMemoriesRequest.class,
      responseType = dev.memoryd.v1.ListMemoriesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.ListMemoriesRequest,
      dev.memoryd.v1.ListMemoriesResponse> getListMemoriesMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.ListMemoriesRequest, dev.memoryd.v1.ListMemoriesResponse> getListMemoriesMethod;
    if ((getListMemoriesMethod = MemoryServiceGrpc.getListMemoriesMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getListMemoriesMethod = MemoryServiceGrpc.getListMemoriesMethod) == null) {
          MemoryServiceGrpc.getListMemoriesMethod = getListMemoriesMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.ListMemoriesRequest, dev.memoryd.v1.ListMemoriesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListMemories"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ListMemoriesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ListMemoriesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("ListMemories"))
              .build();
        }
      }
    }
    return getListMemoriesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.UpdateMemoryRequest,
      dev.memoryd.v1.UpdateMemoryResponse> getUpdateMemoryMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "UpdateMemory",
      requestType = dev.memoryd.v1.UpdateMemoryRequest.class,
      responseType = dev.memoryd.v1.UpdateMemoryResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.UpdateMemoryRequest,
      dev.memoryd.v1.UpdateMemoryResponse> getUpdateMemoryMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.UpdateMemoryRequest, dev.memoryd.v1.UpdateMemoryResponse> getUpdateMemoryMethod;
    if ((getUpdateMemoryMethod = MemoryServiceGrpc.getUpdateMemoryMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getUpdateMemoryMethod = MemoryServiceGrpc.getUpdateMemoryMethod) == null) {
          MemoryServiceGrpc.getUpdateMemoryMethod = getUpdateMemoryMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.UpdateMemoryRequest, dev.memoryd.v1.UpdateMemoryResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "UpdateMemory"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.UpdateMemoryRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.UpdateMemoryResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("UpdateMemory"))
              .build();
        }
      }
    }
    return getUpdateMemoryMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.ForgetMemoriesRequest,
      dev.memoryd.v1.ForgetMemoriesResponse> getForgetMemoriesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ForgetMemories",
      requestType = dev.memoryd.v1.ForgetMemoriesRequest.class,
      responseType = dev.memoryd.v1.ForgetMemoriesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.ForgetMemoriesRequest,
      dev.memoryd.v1.ForgetMemoriesResponse> getForgetMemoriesMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.ForgetMemoriesRequest, dev.memoryd.v1.ForgetMemoriesResponse> getForgetMemoriesMethod;
    if ((getForgetMemoriesMethod = MemoryServiceGrpc.getForgetMemoriesMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getForgetMemoriesMethod = MemoryServiceGrpc.getForgetMemoriesMethod) == null) {
          MemoryServiceGrpc.getForgetMemoriesMethod = getForgetMemoriesMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.ForgetMemoriesRequest, dev.memoryd.v1.ForgetMemoriesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ForgetMemories"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ForgetMemoriesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ForgetMemoriesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("ForgetMemories"))
              .build();
        }
      }
    }
    return getForgetMemoriesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.SetMemoryRequest,
      dev.memoryd.v1.SetMemoryResponse> getSetMemoryMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SetMemory",
      requestType = dev.memoryd.v1.SetMemoryRequest.class,
      responseType = dev.memoryd.v1.SetMemoryResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.SetMemoryRequest,
      dev.memoryd.v1.SetMemoryResponse> getSetMemoryMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.SetMemoryRequest, dev.memoryd.v1.SetMemoryResponse> getSetMemoryMethod;
    if ((getSetMemoryMethod = MemoryServiceGrpc.getSetMemoryMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getSetMemoryMethod = MemoryServiceGrpc.getSetMemoryMethod) == null) {
          MemoryServiceGrpc.getSetMemoryMethod = getSetMemoryMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.SetMemoryRequest, dev.memoryd.v1.SetMemoryResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SetMemory"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.SetMemoryRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.SetMemoryResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("SetMemory"))
              .build();
        }
      }
    }
    return getSetMemoryMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.GetKeyRequest,
      dev.memoryd.v1.GetKeyResponse> getGetKeyMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetKey",
      requestType = dev.memoryd.v1.GetKeyRequest.class,
      responseType = dev.memoryd.v1.GetKeyResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.GetKeyRequest,
      dev.memoryd.v1.GetKeyResponse> getGetKeyMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.GetKeyRequest, dev.memoryd.v1.GetKeyResponse> getGetKeyMethod;
    if ((getGetKeyMethod = MemoryServiceGrpc.getGetKeyMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getGetKeyMethod = MemoryServiceGrpc.getGetKeyMethod) == null) {
          MemoryServiceGrpc.getGetKeyMethod = getGetKeyMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.GetKeyRequest, dev.memoryd.v1.GetKeyResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetKey"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetKeyRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetKeyResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("GetKey"))
              .build();
        }
      }
    }
    return getGetKeyMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.ListKeysRequest,
      dev.memoryd.v1.ListKeysResponse> getListKeysMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListKeys",
      requestType = dev.memoryd.v1.ListKeysRequest.class,
      responseType = dev.memoryd.v1.ListKeysResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.ListKeysRequest,
      dev.memoryd.v1.ListKeysResponse> getListKeysMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.ListKeysRequest, dev.memoryd.v1.ListKeysResponse> getListKeysMethod;
    if ((getListKeysMethod = MemoryServiceGrpc.getListKeysMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getListKeysMethod = MemoryServiceGrpc.getListKeysMethod) == null) {
          MemoryServiceGrpc.getListKeysMethod = getListKeysMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.ListKeysRequest, dev.memoryd.v1.ListKeysResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListKeys"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ListKeysRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ListKeysResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("ListKeys"))
              .build();
        }
      }
    }
    return getListKeysMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.KeyHistoryRequest,
      dev.memoryd.v1.KeyHistoryResponse> getKeyHistoryMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "KeyHistory",
      requestType = dev.memoryd.v1.KeyHistoryRequest.class,
      responseType = dev.memoryd.v1.KeyHistoryResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.KeyHistoryRequest,
      dev.memoryd.v1.KeyHistoryResponse> getKeyHistoryMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.KeyHistoryRequest, dev.memoryd.v1.KeyHistoryResponse> getKeyHistoryMethod;
    if ((getKeyHistoryMethod = MemoryServiceGrpc.getKeyHistoryMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getKeyHistoryMethod = MemoryServiceGrpc.getKeyHistoryMethod) == null) {
          MemoryServiceGrpc.getKeyHistoryMethod = getKeyHistoryMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.KeyHistoryRequest, dev.memoryd.v1.KeyHistoryResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "KeyHistory"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.KeyHistoryRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.KeyHistoryResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("KeyHistory"))
              .build();
        }
      }
    }
    return getKeyHistoryMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.SetWorkingMemoryRequest,
      dev.memoryd.v1.SetWorkingMemoryResponse> getSetWorkingMemoryMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SetWorkingMemory",
      requestType = dev.memoryd.v1.SetWorkingMemoryRequest.class,
      responseType = dev.memoryd.v1.SetWorkingMemoryResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.SetWorkingMemoryRequest,
      dev.memoryd.v1.SetWorkingMemoryResponse> getSetWorkingMemoryMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.SetWorkingMemoryRequest, dev.memoryd.v1.SetWorkingMemoryResponse> getSetWorkingMemoryMethod;
    if ((getSetWorkingMemoryMethod = MemoryServiceGrpc.getSetWorkingMemoryMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getSetWorkingMemoryMethod = MemoryServiceGrpc.getSetWorkingMemoryMethod) == null) {
          MemoryServiceGrpc.getSetWorkingMemoryMethod = getSetWorkingMemoryMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.SetWorkingMemoryRequest, dev.memoryd.v1.SetWorkingMemoryResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SetWorkingMemory"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.SetWorkingMemoryRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.SetWorkingMemoryResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("SetWorkingMemory"))
              .build();
        }
      }
    }
    return getSetWorkingMemoryMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.GetWorkingMemoryRequest,
      dev.memoryd.v1.GetWorkingMemoryResponse> getGetWorkingMemoryMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetWorkingMemory",
      requestType = dev.memoryd.v1.GetWorkingMemoryRequest.class,
      responseType = dev.memoryd.v1.GetWorkingMemoryResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.GetWorkingMemoryRequest,
      dev.memoryd.v1.GetWorkingMemoryResponse> getGetWorkingMemoryMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.GetWorkingMemoryRequest, dev.memoryd.v1.GetWorkingMemoryResponse> getGetWorkingMemoryMethod;
    if ((getGetWorkingMemoryMethod = MemoryServiceGrpc.getGetWorkingMemoryMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getGetWorkingMemoryMethod = MemoryServiceGrpc.getGetWorkingMemoryMethod) == null) {
          MemoryServiceGrpc.getGetWorkingMemoryMethod = getGetWorkingMemoryMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.GetWorkingMemoryRequest, dev.memoryd.v1.GetWorkingMemoryResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetWorkingMemory"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetWorkingMemoryRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetWorkingMemoryResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("GetWorkingMemory"))
              .build();
        }
      }
    }
    return getGetWorkingMemoryMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.DeleteWorkingMemoryRequest,
      dev.memoryd.v1.DeleteWorkingMemoryResponse> getDeleteWorkingMemoryMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteWorkingMemory",
      requestType = dev.memoryd.v1.DeleteWorkingMemoryRequest.class,
      responseType = dev.memoryd.v1.DeleteWorkingMemoryResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.DeleteWorkingMemoryRequest,
      dev.memoryd.v1.DeleteWorkingMemoryResponse> getDeleteWorkingMemoryMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.DeleteWorkingMemoryRequest, dev.memoryd.v1.DeleteWorkingMemoryResponse> getDeleteWorkingMemoryMethod;
    if ((getDeleteWorkingMemoryMethod = MemoryServiceGrpc.getDeleteWorkingMemoryMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getDeleteWorkingMemoryMethod = MemoryServiceGrpc.getDeleteWorkingMemoryMethod) == null) {
          MemoryServiceGrpc.getDeleteWorkingMemoryMethod = getDeleteWorkingMemoryMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.DeleteWorkingMemoryRequest, dev.memoryd.v1.DeleteWorkingMemoryResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteWorkingMemory"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.DeleteWorkingMemoryRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.DeleteWorkingMemoryResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("DeleteWorkingMemory"))
              .build();
        }
      }
    }
    return getDeleteWorkingMemoryMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.ListWorkingMemoryScopesRequest,
      dev.memoryd.v1.ListWorkingMemoryScopesResponse> getListWorkingMemoryScopesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListWorkingMemoryScopes",
      requestType = dev.memoryd.v1.ListWorkingMemoryScopesRequest.class,
      responseType = dev.memoryd.v1.ListWorkingMemoryScopesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.ListWorkingMemoryScopesRequest,
      dev.memoryd.v1.ListWorkingMemoryScopesResponse> getListWorkingMemoryScopesMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.ListWorkingMemoryScopesRequest, dev.memoryd.v1.ListWorkingMemoryScopesResponse> getListWorkingMemoryScopesMethod;
    if ((getListWorkingMemoryScopesMethod = MemoryServiceGrpc.getListWorkingMemoryScopesMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getListWorkingMemoryScopesMethod = MemoryServiceGrpc.getListWorkingMemoryScopesMethod) == null) {
          MemoryServiceGrpc.getListWorkingMemoryScopesMethod = getListWorkingMemoryScopesMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.ListWorkingMemoryScopesRequest, dev.memoryd.v1.ListWorkingMemoryScopesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListWorkingMemoryScopes"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ListWorkingMemoryScopesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ListWorkingMemoryScopesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("ListWorkingMemoryScopes"))
              .build();
        }
      }
    }
    return getListWorkingMemoryScopesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.GetProfileRequest,
      dev.memoryd.v1.GetProfileResponse> getGetProfileMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetProfile",
      requestType = dev.memoryd.v1.GetProfileRequest.class,
      responseType = dev.memoryd.v1.GetProfileResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.GetProfileRequest,
      dev.memoryd.v1.GetProfileResponse> getGetProfileMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.GetProfileRequest, dev.memoryd.v1.GetProfileResponse> getGetProfileMethod;
    if ((getGetProfileMethod = MemoryServiceGrpc.getGetProfileMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getGetProfileMethod = MemoryServiceGrpc.getGetProfileMethod) == null) {
          MemoryServiceGrpc.getGetProfileMethod = getGetProfileMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.GetProfileRequest, dev.memoryd.v1.GetProfileResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetProfile"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetProfileRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetProfileResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("GetProfile"))
              .build();
        }
      }
    }
    return getGetProfileMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.SetProfileRequest,
      dev.memoryd.v1.SetProfileResponse> getSetProfileMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SetProfile",
      requestType = dev.memoryd.v1.SetProfileRequest.class,
      responseType = dev.memoryd.v1.SetProfileResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.SetProfileRequest,
      dev.memoryd.v1.SetProfileResponse> getSetProfileMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.SetProfileRequest, dev.memoryd.v1.SetProfileResponse> getSetProfileMethod;
    if ((getSetProfileMethod = MemoryServiceGrpc.getSetProfileMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getSetProfileMethod = MemoryServiceGrpc.getSetProfileMethod) == null) {
          MemoryServiceGrpc.getSetProfileMethod = getSetProfileMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.SetProfileRequest, dev.memoryd.v1.SetProfileResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SetProfile"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.SetProfileRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.SetProfileResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("SetProfile"))
              .build();
        }
      }
    }
    return getSetProfileMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.AppendMessagesRequest,
      dev.memoryd.v1.AppendMessagesResponse> getAppendMessagesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "AppendMessages",
      requestType = dev.memoryd.v1.AppendMessagesRequest.class,
      responseType = dev.memoryd.v1.AppendMessagesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.AppendMessagesRequest,
      dev.memoryd.v1.AppendMessagesResponse> getAppendMessagesMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.AppendMessagesRequest, dev.memoryd.v1.AppendMessagesResponse> getAppendMessagesMethod;
    if ((getAppendMessagesMethod = MemoryServiceGrpc.getAppendMessagesMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getAppendMessagesMethod = MemoryServiceGrpc.getAppendMessagesMethod) == null) {
          MemoryServiceGrpc.getAppendMessagesMethod = getAppendMessagesMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.AppendMessagesRequest, dev.memoryd.v1.AppendMessagesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "AppendMessages"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.AppendMessagesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.AppendMessagesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("AppendMessages"))
              .build();
        }
      }
    }
    return getAppendMessagesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.GetSessionWindowRequest,
      dev.memoryd.v1.GetSessionWindowResponse> getGetSessionWindowMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetSessionWindow",
      requestType = dev.memoryd.v1.GetSessionWindowRequest.class,
      responseType = dev.memoryd.v1.GetSessionWindowResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.GetSessionWindowRequest,
      dev.memoryd.v1.GetSessionWindowResponse> getGetSessionWindowMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.GetSessionWindowRequest, dev.memoryd.v1.GetSessionWindowResponse> getGetSessionWindowMethod;
    if ((getGetSessionWindowMethod = MemoryServiceGrpc.getGetSessionWindowMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getGetSessionWindowMethod = MemoryServiceGrpc.getGetSessionWindowMethod) == null) {
          MemoryServiceGrpc.getGetSessionWindowMethod = getGetSessionWindowMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.GetSessionWindowRequest, dev.memoryd.v1.GetSessionWindowResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetSessionWindow"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetSessionWindowRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetSessionWindowResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("GetSessionWindow"))
              .build();
        }
      }
    }
    return getGetSessionWindowMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.InjectInstructionRequest,
      dev.memoryd.v1.InjectInstructionResponse> getInjectInstructionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "InjectInstruction",
      requestType = dev.memoryd.v1.InjectInstructionRequest.class,
      responseType = dev.memoryd.v1.InjectInstructionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.InjectInstructionRequest,
      dev.memoryd.v1.InjectInstructionResponse> getInjectInstructionMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.InjectInstructionRequest, dev.memoryd.v1.InjectInstructionResponse> getInjectInstructionMethod;
    if ((getInjectInstructionMethod = MemoryServiceGrpc.getInjectInstructionMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getInjectInstructionMethod = MemoryServiceGrpc.getInjectInstructionMethod) == null) {
          MemoryServiceGrpc.getInjectInstructionMethod = getInjectInstructionMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.InjectInstructionRequest, dev.memoryd.v1.InjectInstructionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "InjectInstruction"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.InjectInstructionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.InjectInstructionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("InjectInstruction"))
              .build();
        }
      }
    }
    return getInjectInstructionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.EndSessionRequest,
      dev.memoryd.v1.EndSessionResponse> getEndSessionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "EndSession",
      requestType = dev.memoryd.v1.EndSessionRequest.class,
      responseType = dev.memoryd.v1.EndSessionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.EndSessionRequest,
      dev.memoryd.v1.EndSessionResponse> getEndSessionMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.EndSessionRequest, dev.memoryd.v1.EndSessionResponse> getEndSessionMethod;
    if ((getEndSessionMethod = MemoryServiceGrpc.getEndSessionMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getEndSessionMethod = MemoryServiceGrpc.getEndSessionMethod) == null) {
          MemoryServiceGrpc.getEndSessionMethod = getEndSessionMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.EndSessionRequest, dev.memoryd.v1.EndSessionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "EndSession"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.EndSessionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.EndSessionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("EndSession"))
              .build();
        }
      }
    }
    return getEndSessionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.GetSessionMessagesRequest,
      dev.memoryd.v1.GetSessionMessagesResponse> getGetSessionMessagesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetSessionMessages",
      requestType = dev.memoryd.v1.GetSessionMessagesRequest.class,
      responseType = dev.memoryd.v1.GetSessionMessagesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.GetSessionMessagesRequest,
      dev.memoryd.v1.GetSessionMessagesResponse> getGetSessionMessagesMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.GetSessionMessagesRequest, dev.memoryd.v1.GetSessionMessagesResponse> getGetSessionMessagesMethod;
    if ((getGetSessionMessagesMethod = MemoryServiceGrpc.getGetSessionMessagesMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getGetSessionMessagesMethod = MemoryServiceGrpc.getGetSessionMessagesMethod) == null) {
          MemoryServiceGrpc.getGetSessionMessagesMethod = getGetSessionMessagesMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.GetSessionMessagesRequest, dev.memoryd.v1.GetSessionMessagesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetSessionMessages"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetSessionMessagesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetSessionMessagesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("GetSessionMessages"))
              .build();
        }
      }
    }
    return getGetSessionMessagesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.DeleteMessagesRequest,
      dev.memoryd.v1.DeleteMessagesResponse> getDeleteMessagesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteMessages",
      requestType = dev.memoryd.v1.DeleteMessagesRequest.class,
      responseType = dev.memoryd.v1.DeleteMessagesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.DeleteMessagesRequest,
      dev.memoryd.v1.DeleteMessagesResponse> getDeleteMessagesMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.DeleteMessagesRequest, dev.memoryd.v1.DeleteMessagesResponse> getDeleteMessagesMethod;
    if ((getDeleteMessagesMethod = MemoryServiceGrpc.getDeleteMessagesMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getDeleteMessagesMethod = MemoryServiceGrpc.getDeleteMessagesMethod) == null) {
          MemoryServiceGrpc.getDeleteMessagesMethod = getDeleteMessagesMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.DeleteMessagesRequest, dev.memoryd.v1.DeleteMessagesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteMessages"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.DeleteMessagesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.DeleteMessagesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("DeleteMessages"))
              .build();
        }
      }
    }
    return getDeleteMessagesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.ClearSessionRequest,
      dev.memoryd.v1.ClearSessionResponse> getClearSessionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ClearSession",
      requestType = dev.memoryd.v1.ClearSessionRequest.class,
      responseType = dev.memoryd.v1.ClearSessionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.ClearSessionRequest,
      dev.memoryd.v1.ClearSessionResponse> getClearSessionMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.ClearSessionRequest, dev.memoryd.v1.ClearSessionResponse> getClearSessionMethod;
    if ((getClearSessionMethod = MemoryServiceGrpc.getClearSessionMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getClearSessionMethod = MemoryServiceGrpc.getClearSessionMethod) == null) {
          MemoryServiceGrpc.getClearSessionMethod = getClearSessionMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.ClearSessionRequest, dev.memoryd.v1.ClearSessionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ClearSession"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ClearSessionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ClearSessionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("ClearSession"))
              .build();
        }
      }
    }
    return getClearSessionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.GetSessionAttachmentRequest,
      dev.memoryd.v1.GetSessionAttachmentResponse> getGetSessionAttachmentMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetSessionAttachment",
      requestType = dev.memoryd.v1.GetSessionAttachmentRequest.class,
      responseType = dev.memoryd.v1.GetSessionAttachmentResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.GetSessionAttachmentRequest,
      dev.memoryd.v1.GetSessionAttachmentResponse> getGetSessionAttachmentMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.GetSessionAttachmentRequest, dev.memoryd.v1.GetSessionAttachmentResponse> getGetSessionAttachmentMethod;
    if ((getGetSessionAttachmentMethod = MemoryServiceGrpc.getGetSessionAttachmentMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getGetSessionAttachmentMethod = MemoryServiceGrpc.getGetSessionAttachmentMethod) == null) {
          MemoryServiceGrpc.getGetSessionAttachmentMethod = getGetSessionAttachmentMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.GetSessionAttachmentRequest, dev.memoryd.v1.GetSessionAttachmentResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetSessionAttachment"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetSessionAttachmentRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetSessionAttachmentResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("GetSessionAttachment"))
              .build();
        }
      }
    }
    return getGetSessionAttachmentMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.WatchRequest,
      dev.memoryd.v1.WatchResponse> getWatchMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Watch",
      requestType = dev.memoryd.v1.WatchRequest.class,
      responseType = dev.memoryd.v1.WatchResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.WatchRequest,
      dev.memoryd.v1.WatchResponse> getWatchMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.WatchRequest, dev.memoryd.v1.WatchResponse> getWatchMethod;
    if ((getWatchMethod = MemoryServiceGrpc.getWatchMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getWatchMethod = MemoryServiceGrpc.getWatchMethod) == null) {
          MemoryServiceGrpc.getWatchMethod = getWatchMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.WatchRequest, dev.memoryd.v1.WatchResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Watch"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.WatchRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.WatchResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("Watch"))
              .build();
        }
      }
    }
    return getWatchMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static MemoryServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<MemoryServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<MemoryServiceStub>() {
        @java.lang.Override
        public MemoryServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new MemoryServiceStub(channel, callOptions);
        }
      };
    return MemoryServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static MemoryServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<MemoryServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<MemoryServiceBlockingV2Stub>() {
        @java.lang.Override
        public MemoryServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new MemoryServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return MemoryServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static MemoryServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<MemoryServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<MemoryServiceBlockingStub>() {
        @java.lang.Override
        public MemoryServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new MemoryServiceBlockingStub(channel, callOptions);
        }
      };
    return MemoryServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static MemoryServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<MemoryServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<MemoryServiceFutureStub>() {
        @java.lang.Override
        public MemoryServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new MemoryServiceFutureStub(channel, callOptions);
        }
      };
    return MemoryServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * Long-term, keyed, working and short-term (session) memory of an agent.
   * The tenant always comes from the authenticated caller; agent_id names the agent.
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * Stores one long-term memory (near-duplicates update the existing one).
     * </pre>
     */
    default void remember(dev.memoryd.v1.RememberRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.RememberResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRememberMethod(), responseObserver);
    }

    /**
     * <pre>
     * Stores many memories in one durable write.
     * </pre>
     */
    default void rememberBatch(dev.memoryd.v1.RememberBatchRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.RememberBatchResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRememberBatchMethod(), responseObserver);
    }

    /**
     * <pre>
     * Semantic / keyword / hybrid retrieval with scoring components.
     * </pre>
     */
    default void recall(dev.memoryd.v1.RecallRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.RecallResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRecallMethod(), responseObserver);
    }

    /**
     */
    default void getMemory(dev.memoryd.v1.GetMemoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetMemoryResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetMemoryMethod(), responseObserver);
    }

    /**
     */
    default void listMemories(dev.memoryd.v1.ListMemoriesRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ListMemoriesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListMemoriesMethod(), responseObserver);
    }

    /**
     */
    default void updateMemory(dev.memoryd.v1.UpdateMemoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.UpdateMemoryResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getUpdateMemoryMethod(), responseObserver);
    }

    /**
     */
    default void forgetMemories(dev.memoryd.v1.ForgetMemoriesRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ForgetMemoriesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getForgetMemoriesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Keyed memory: one slot per key, last write wins, null content is a tombstone.
     * </pre>
     */
    default void setMemory(dev.memoryd.v1.SetMemoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.SetMemoryResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSetMemoryMethod(), responseObserver);
    }

    /**
     */
    default void getKey(dev.memoryd.v1.GetKeyRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetKeyResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetKeyMethod(), responseObserver);
    }

    /**
     */
    default void listKeys(dev.memoryd.v1.ListKeysRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ListKeysResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListKeysMethod(), responseObserver);
    }

    /**
     */
    default void keyHistory(dev.memoryd.v1.KeyHistoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.KeyHistoryResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getKeyHistoryMethod(), responseObserver);
    }

    /**
     * <pre>
     * Working memory: task state per (thread_id, resource_id) scope.
     * </pre>
     */
    default void setWorkingMemory(dev.memoryd.v1.SetWorkingMemoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.SetWorkingMemoryResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSetWorkingMemoryMethod(), responseObserver);
    }

    /**
     */
    default void getWorkingMemory(dev.memoryd.v1.GetWorkingMemoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetWorkingMemoryResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetWorkingMemoryMethod(), responseObserver);
    }

    /**
     */
    default void deleteWorkingMemory(dev.memoryd.v1.DeleteWorkingMemoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.DeleteWorkingMemoryResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteWorkingMemoryMethod(), responseObserver);
    }

    /**
     */
    default void listWorkingMemoryScopes(dev.memoryd.v1.ListWorkingMemoryScopesRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ListWorkingMemoryScopesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListWorkingMemoryScopesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Agent profile (agent.md) with optimistic concurrency.
     * </pre>
     */
    default void getProfile(dev.memoryd.v1.GetProfileRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetProfileResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetProfileMethod(), responseObserver);
    }

    /**
     */
    default void setProfile(dev.memoryd.v1.SetProfileRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.SetProfileResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSetProfileMethod(), responseObserver);
    }

    /**
     * <pre>
     * Sessions (short-term memory).
     * </pre>
     */
    default void appendMessages(dev.memoryd.v1.AppendMessagesRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.AppendMessagesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getAppendMessagesMethod(), responseObserver);
    }

    /**
     */
    default void getSessionWindow(dev.memoryd.v1.GetSessionWindowRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetSessionWindowResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetSessionWindowMethod(), responseObserver);
    }

    /**
     */
    default void injectInstruction(dev.memoryd.v1.InjectInstructionRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.InjectInstructionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getInjectInstructionMethod(), responseObserver);
    }

    /**
     */
    default void endSession(dev.memoryd.v1.EndSessionRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.EndSessionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getEndSessionMethod(), responseObserver);
    }

    /**
     * <pre>
     * Every stored message of a session, summarised or not, by seq range (paged).
     * </pre>
     */
    default void getSessionMessages(dev.memoryd.v1.GetSessionMessagesRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetSessionMessagesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetSessionMessagesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Deletes messages by seq; a summary that covered one is rebuilt without it.
     * </pre>
     */
    default void deleteMessages(dev.memoryd.v1.DeleteMessagesRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.DeleteMessagesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteMessagesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Deletes every message and the summary; the session stays open.
     * </pre>
     */
    default void clearSession(dev.memoryd.v1.ClearSessionRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ClearSessionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getClearSessionMethod(), responseObserver);
    }

    /**
     * <pre>
     * The full content of an offloaded message (its window and stored message hold a stub).
     * </pre>
     */
    default void getSessionAttachment(dev.memoryd.v1.GetSessionAttachmentRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetSessionAttachmentResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetSessionAttachmentMethod(), responseObserver);
    }

    /**
     * <pre>
     * Change feed (docs/watch.md)
     * Every change of the agent (or of the tenant: tenant_wide, admin) after a cursor, in
     * order, exactly once per cursor; resumable after a disconnect and a restart.
     * </pre>
     */
    default void watch(dev.memoryd.v1.WatchRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.WatchResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getWatchMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service MemoryService.
   * <pre>
   * Long-term, keyed, working and short-term (session) memory of an agent.
   * The tenant always comes from the authenticated caller; agent_id names the agent.
   * </pre>
   */
  public static abstract class MemoryServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return MemoryServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service MemoryService.
   * <pre>
   * Long-term, keyed, working and short-term (session) memory of an agent.
   * The tenant always comes from the authenticated caller; agent_id names the agent.
   * </pre>
   */
  public static final class MemoryServiceStub
      extends io.grpc.stub.AbstractAsyncStub<MemoryServiceStub> {
    private MemoryServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected MemoryServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new MemoryServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * Stores one long-term memory (near-duplicates update the existing one).
     * </pre>
     */
    public void remember(dev.memoryd.v1.RememberRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.RememberResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRememberMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Stores many memories in one durable write.
     * </pre>
     */
    public void rememberBatch(dev.memoryd.v1.RememberBatchRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.RememberBatchResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRememberBatchMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Semantic / keyword / hybrid retrieval with scoring components.
     * </pre>
     */
    public void recall(dev.memoryd.v1.RecallRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.RecallResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRecallMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void getMemory(dev.memoryd.v1.GetMemoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetMemoryResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetMemoryMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void listMemories(dev.memoryd.v1.ListMemoriesRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ListMemoriesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListMemoriesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void updateMemory(dev.memoryd.v1.UpdateMemoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.UpdateMemoryResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getUpdateMemoryMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void forgetMemories(dev.memoryd.v1.ForgetMemoriesRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ForgetMemoriesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getForgetMemoriesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Keyed memory: one slot per key, last write wins, null content is a tombstone.
     * </pre>
     */
    public void setMemory(dev.memoryd.v1.SetMemoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.SetMemoryResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSetMemoryMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void getKey(dev.memoryd.v1.GetKeyRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetKeyResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetKeyMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void listKeys(dev.memoryd.v1.ListKeysRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ListKeysResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListKeysMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void keyHistory(dev.memoryd.v1.KeyHistoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.KeyHistoryResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getKeyHistoryMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Working memory: task state per (thread_id, resource_id) scope.
     * </pre>
     */
    public void setWorkingMemory(dev.memoryd.v1.SetWorkingMemoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.SetWorkingMemoryResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSetWorkingMemoryMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void getWorkingMemory(dev.memoryd.v1.GetWorkingMemoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetWorkingMemoryResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetWorkingMemoryMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void deleteWorkingMemory(dev.memoryd.v1.DeleteWorkingMemoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.DeleteWorkingMemoryResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteWorkingMemoryMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void listWorkingMemoryScopes(dev.memoryd.v1.ListWorkingMemoryScopesRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ListWorkingMemoryScopesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListWorkingMemoryScopesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Agent profile (agent.md) with optimistic concurrency.
     * </pre>
     */
    public void getProfile(dev.memoryd.v1.GetProfileRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetProfileResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetProfileMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void setProfile(dev.memoryd.v1.SetProfileRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.SetProfileResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSetProfileMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Sessions (short-term memory).
     * </pre>
     */
    public void appendMessages(dev.memoryd.v1.AppendMessagesRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.AppendMessagesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getAppendMessagesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void getSessionWindow(dev.memoryd.v1.GetSessionWindowRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetSessionWindowResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetSessionWindowMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void injectInstruction(dev.memoryd.v1.InjectInstructionRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.InjectInstructionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getInjectInstructionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void endSession(dev.memoryd.v1.EndSessionRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.EndSessionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getEndSessionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Every stored message of a session, summarised or not, by seq range (paged).
     * </pre>
     */
    public void getSessionMessages(dev.memoryd.v1.GetSessionMessagesRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetSessionMessagesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetSessionMessagesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Deletes messages by seq; a summary that covered one is rebuilt without it.
     * </pre>
     */
    public void deleteMessages(dev.memoryd.v1.DeleteMessagesRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.DeleteMessagesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteMessagesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Deletes every message and the summary; the session stays open.
     * </pre>
     */
    public void clearSession(dev.memoryd.v1.ClearSessionRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ClearSessionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getClearSessionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * The full content of an offloaded message (its window and stored message hold a stub).
     * </pre>
     */
    public void getSessionAttachment(dev.memoryd.v1.GetSessionAttachmentRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetSessionAttachmentResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetSessionAttachmentMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Change feed (docs/watch.md)
     * Every change of the agent (or of the tenant: tenant_wide, admin) after a cursor, in
     * order, exactly once per cursor; resumable after a disconnect and a restart.
     * </pre>
     */
    public void watch(dev.memoryd.v1.WatchRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.WatchResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncServerStreamingCall(
          getChannel().newCall(getWatchMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service MemoryService.
   * <pre>
   * Long-term, keyed, working and short-term (session) memory of an agent.
   * The tenant always comes from the authenticated caller; agent_id names the agent.
   * </pre>
   */
  public static final class MemoryServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<MemoryServiceBlockingV2Stub> {
    private MemoryServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected MemoryServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new MemoryServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * Stores one long-term memory (near-duplicates update the existing one).
     * </pre>
     */
    public dev.memoryd.v1.RememberResponse remember(dev.memoryd.v1.RememberRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getRememberMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Stores many memories in one durable write.
     * </pre>
     */
    public dev.memoryd.v1.RememberBatchResponse rememberBatch(dev.memoryd.v1.RememberBatchRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getRememberBatchMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Semantic / keyword / hybrid retrieval with scoring components.
     * </pre>
     */
    public dev.memoryd.v1.RecallResponse recall(dev.memoryd.v1.RecallRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getRecallMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.GetMemoryResponse getMemory(dev.memoryd.v1.GetMemoryRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetMemoryMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.ListMemoriesResponse listMemories(dev.memoryd.v1.ListMemoriesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListMemoriesMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.UpdateMemoryResponse updateMemory(dev.memoryd.v1.UpdateMemoryRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getUpdateMemoryMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.ForgetMemoriesResponse forgetMemories(dev.memoryd.v1.ForgetMemoriesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getForgetMemoriesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Keyed memory: one slot per key, last write wins, null content is a tombstone.
     * </pre>
     */
    public dev.memoryd.v1.SetMemoryResponse setMemory(dev.memoryd.v1.SetMemoryRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSetMemoryMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.GetKeyResponse getKey(dev.memoryd.v1.GetKeyRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetKeyMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.ListKeysResponse listKeys(dev.memoryd.v1.ListKeysRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListKeysMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.KeyHistoryResponse keyHistory(dev.memoryd.v1.KeyHistoryRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getKeyHistoryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Working memory: task state per (thread_id, resource_id) scope.
     * </pre>
     */
    public dev.memoryd.v1.SetWorkingMemoryResponse setWorkingMemory(dev.memoryd.v1.SetWorkingMemoryRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSetWorkingMemoryMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.GetWorkingMemoryResponse getWorkingMemory(dev.memoryd.v1.GetWorkingMemoryRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetWorkingMemoryMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.DeleteWorkingMemoryResponse deleteWorkingMemory(dev.memoryd.v1.DeleteWorkingMemoryRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeleteWorkingMemoryMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.ListWorkingMemoryScopesResponse listWorkingMemoryScopes(dev.memoryd.v1.ListWorkingMemoryScopesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListWorkingMemoryScopesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Agent profile (agent.md) with optimistic concurrency.
     * </pre>
     */
    public dev.memoryd.v1.GetProfileResponse getProfile(dev.memoryd.v1.GetProfileRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetProfileMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.SetProfileResponse setProfile(dev.memoryd.v1.SetProfileRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSetProfileMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Sessions (short-term memory).
     * </pre>
     */
    public dev.memoryd.v1.AppendMessagesResponse appendMessages(dev.memoryd.v1.AppendMessagesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getAppendMessagesMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.GetSessionWindowResponse getSessionWindow(dev.memoryd.v1.GetSessionWindowRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetSessionWindowMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.InjectInstructionResponse injectInstruction(dev.memoryd.v1.InjectInstructionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getInjectInstructionMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.EndSessionResponse endSession(dev.memoryd.v1.EndSessionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getEndSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Every stored message of a session, summarised or not, by seq range (paged).
     * </pre>
     */
    public dev.memoryd.v1.GetSessionMessagesResponse getSessionMessages(dev.memoryd.v1.GetSessionMessagesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetSessionMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes messages by seq; a summary that covered one is rebuilt without it.
     * </pre>
     */
    public dev.memoryd.v1.DeleteMessagesResponse deleteMessages(dev.memoryd.v1.DeleteMessagesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeleteMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes every message and the summary; the session stays open.
     * </pre>
     */
    public dev.memoryd.v1.ClearSessionResponse clearSession(dev.memoryd.v1.ClearSessionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getClearSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * The full content of an offloaded message (its window and stored message hold a stub).
     * </pre>
     */
    public dev.memoryd.v1.GetSessionAttachmentResponse getSessionAttachment(dev.memoryd.v1.GetSessionAttachmentRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetSessionAttachmentMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Change feed (docs/watch.md)
     * Every change of the agent (or of the tenant: tenant_wide, admin) after a cursor, in
     * order, exactly once per cursor; resumable after a disconnect and a restart.
     * </pre>
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<?, dev.memoryd.v1.WatchResponse>
        watch(dev.memoryd.v1.WatchRequest request) {
      return io.grpc.stub.ClientCalls.blockingV2ServerStreamingCall(
          getChannel(), getWatchMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service MemoryService.
   * <pre>
   * Long-term, keyed, working and short-term (session) memory of an agent.
   * The tenant always comes from the authenticated caller; agent_id names the agent.
   * </pre>
   */
  public static final class MemoryServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<MemoryServiceBlockingStub> {
    private MemoryServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected MemoryServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new MemoryServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * Stores one long-term memory (near-duplicates update the existing one).
     * </pre>
     */
    public dev.memoryd.v1.RememberResponse remember(dev.memoryd.v1.RememberRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRememberMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Stores many memories in one durable write.
     * </pre>
     */
    public dev.memoryd.v1.RememberBatchResponse rememberBatch(dev.memoryd.v1.RememberBatchRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRememberBatchMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Semantic / keyword / hybrid retrieval with scoring components.
     * </pre>
     */
    public dev.memoryd.v1.RecallResponse recall(dev.memoryd.v1.RecallRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRecallMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.GetMemoryResponse getMemory(dev.memoryd.v1.GetMemoryRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetMemoryMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.ListMemoriesResponse listMemories(dev.memoryd.v1.ListMemoriesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListMemoriesMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.UpdateMemoryResponse updateMemory(dev.memoryd.v1.UpdateMemoryRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getUpdateMemoryMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.ForgetMemoriesResponse forgetMemories(dev.memoryd.v1.ForgetMemoriesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getForgetMemoriesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Keyed memory: one slot per key, last write wins, null content is a tombstone.
     * </pre>
     */
    public dev.memoryd.v1.SetMemoryResponse setMemory(dev.memoryd.v1.SetMemoryRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSetMemoryMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.GetKeyResponse getKey(dev.memoryd.v1.GetKeyRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetKeyMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.ListKeysResponse listKeys(dev.memoryd.v1.ListKeysRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListKeysMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.KeyHistoryResponse keyHistory(dev.memoryd.v1.KeyHistoryRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getKeyHistoryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Working memory: task state per (thread_id, resource_id) scope.
     * </pre>
     */
    public dev.memoryd.v1.SetWorkingMemoryResponse setWorkingMemory(dev.memoryd.v1.SetWorkingMemoryRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSetWorkingMemoryMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.GetWorkingMemoryResponse getWorkingMemory(dev.memoryd.v1.GetWorkingMemoryRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetWorkingMemoryMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.DeleteWorkingMemoryResponse deleteWorkingMemory(dev.memoryd.v1.DeleteWorkingMemoryRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteWorkingMemoryMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.ListWorkingMemoryScopesResponse listWorkingMemoryScopes(dev.memoryd.v1.ListWorkingMemoryScopesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListWorkingMemoryScopesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Agent profile (agent.md) with optimistic concurrency.
     * </pre>
     */
    public dev.memoryd.v1.GetProfileResponse getProfile(dev.memoryd.v1.GetProfileRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetProfileMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.SetProfileResponse setProfile(dev.memoryd.v1.SetProfileRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSetProfileMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Sessions (short-term memory).
     * </pre>
     */
    public dev.memoryd.v1.AppendMessagesResponse appendMessages(dev.memoryd.v1.AppendMessagesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getAppendMessagesMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.GetSessionWindowResponse getSessionWindow(dev.memoryd.v1.GetSessionWindowRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetSessionWindowMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.InjectInstructionResponse injectInstruction(dev.memoryd.v1.InjectInstructionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getInjectInstructionMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.memoryd.v1.EndSessionResponse endSession(dev.memoryd.v1.EndSessionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getEndSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Every stored message of a session, summarised or not, by seq range (paged).
     * </pre>
     */
    public dev.memoryd.v1.GetSessionMessagesResponse getSessionMessages(dev.memoryd.v1.GetSessionMessagesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetSessionMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes messages by seq; a summary that covered one is rebuilt without it.
     * </pre>
     */
    public dev.memoryd.v1.DeleteMessagesResponse deleteMessages(dev.memoryd.v1.DeleteMessagesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes every message and the summary; the session stays open.
     * </pre>
     */
    public dev.memoryd.v1.ClearSessionResponse clearSession(dev.memoryd.v1.ClearSessionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getClearSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * The full content of an offloaded message (its window and stored message hold a stub).
     * </pre>
     */
    public dev.memoryd.v1.GetSessionAttachmentResponse getSessionAttachment(dev.memoryd.v1.GetSessionAttachmentRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetSessionAttachmentMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Change feed (docs/watch.md)
     * Every change of the agent (or of the tenant: tenant_wide, admin) after a cursor, in
     * order, exactly once per cursor; resumable after a disconnect and a restart.
     * </pre>
     */
    public java.util.Iterator<dev.memoryd.v1.WatchResponse> watch(
        dev.memoryd.v1.WatchRequest request) {
      return io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          getChannel(), getWatchMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service MemoryService.
   * <pre>
   * Long-term, keyed, working and short-term (session) memory of an agent.
   * The tenant always comes from the authenticated caller; agent_id names the agent.
   * </pre>
   */
  public static final class MemoryServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<MemoryServiceFutureStub> {
    private MemoryServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected MemoryServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new MemoryServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * Stores one long-term memory (near-duplicates update the existing one).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.RememberResponse> remember(
        dev.memoryd.v1.RememberRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRememberMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Stores many memories in one durable write.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.RememberBatchResponse> rememberBatch(
        dev.memoryd.v1.RememberBatchRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRememberBatchMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Semantic / keyword / hybrid retrieval with scoring components.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.RecallResponse> recall(
        dev.memoryd.v1.RecallRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRecallMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.GetMemoryResponse> getMemory(
        dev.memoryd.v1.GetMemoryRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetMemoryMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.ListMemoriesResponse> listMemories(
        dev.memoryd.v1.ListMemoriesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListMemoriesMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.UpdateMemoryResponse> updateMemory(
        dev.memoryd.v1.UpdateMemoryRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getUpdateMemoryMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.ForgetMemoriesResponse> forgetMemories(
        dev.memoryd.v1.ForgetMemoriesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getForgetMemoriesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Keyed memory: one slot per key, last write wins, null content is a tombstone.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.SetMemoryResponse> setMemory(
        dev.memoryd.v1.SetMemoryRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSetMemoryMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.GetKeyResponse> getKey(
        dev.memoryd.v1.GetKeyRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetKeyMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.ListKeysResponse> listKeys(
        dev.memoryd.v1.ListKeysRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListKeysMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.KeyHistoryResponse> keyHistory(
        dev.memoryd.v1.KeyHistoryRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getKeyHistoryMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Working memory: task state per (thread_id, resource_id) scope.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.SetWorkingMemoryResponse> setWorkingMemory(
        dev.memoryd.v1.SetWorkingMemoryRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSetWorkingMemoryMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.GetWorkingMemoryResponse> getWorkingMemory(
        dev.memoryd.v1.GetWorkingMemoryRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetWorkingMemoryMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.DeleteWorkingMemoryResponse> deleteWorkingMemory(
        dev.memoryd.v1.DeleteWorkingMemoryRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteWorkingMemoryMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.ListWorkingMemoryScopesResponse> listWorkingMemoryScopes(
        dev.memoryd.v1.ListWorkingMemoryScopesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListWorkingMemoryScopesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Agent profile (agent.md) with optimistic concurrency.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.GetProfileResponse> getProfile(
        dev.memoryd.v1.GetProfileRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetProfileMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.SetProfileResponse> setProfile(
        dev.memoryd.v1.SetProfileRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSetProfileMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Sessions (short-term memory).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.AppendMessagesResponse> appendMessages(
        dev.memoryd.v1.AppendMessagesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getAppendMessagesMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.GetSessionWindowResponse> getSessionWindow(
        dev.memoryd.v1.GetSessionWindowRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetSessionWindowMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.InjectInstructionResponse> injectInstruction(
        dev.memoryd.v1.InjectInstructionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getInjectInstructionMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.EndSessionResponse> endSession(
        dev.memoryd.v1.EndSessionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getEndSessionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Every stored message of a session, summarised or not, by seq range (paged).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.GetSessionMessagesResponse> getSessionMessages(
        dev.memoryd.v1.GetSessionMessagesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetSessionMessagesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Deletes messages by seq; a summary that covered one is rebuilt without it.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.DeleteMessagesResponse> deleteMessages(
        dev.memoryd.v1.DeleteMessagesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteMessagesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Deletes every message and the summary; the session stays open.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.ClearSessionResponse> clearSession(
        dev.memoryd.v1.ClearSessionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getClearSessionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * The full content of an offloaded message (its window and stored message hold a stub).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.GetSessionAttachmentResponse> getSessionAttachment(
        dev.memoryd.v1.GetSessionAttachmentRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetSessionAttachmentMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_REMEMBER = 0;
  private static final int METHODID_REMEMBER_BATCH = 1;
  private static final int METHODID_RECALL = 2;
  private static final int METHODID_GET_MEMORY = 3;
  private static final int METHODID_LIST_MEMORIES = 4;
  private static final int METHODID_UPDATE_MEMORY = 5;
  private static final int METHODID_FORGET_MEMORIES = 6;
  private static final int METHODID_SET_MEMORY = 7;
  private static final int METHODID_GET_KEY = 8;
  private static final int METHODID_LIST_KEYS = 9;
  private static final int METHODID_KEY_HISTORY = 10;
  private static final int METHODID_SET_WORKING_MEMORY = 11;
  private static final int METHODID_GET_WORKING_MEMORY = 12;
  private static final int METHODID_DELETE_WORKING_MEMORY = 13;
  private static final int METHODID_LIST_WORKING_MEMORY_SCOPES = 14;
  private static final int METHODID_GET_PROFILE = 15;
  private static final int METHODID_SET_PROFILE = 16;
  private static final int METHODID_APPEND_MESSAGES = 17;
  private static final int METHODID_GET_SESSION_WINDOW = 18;
  private static final int METHODID_INJECT_INSTRUCTION = 19;
  private static final int METHODID_END_SESSION = 20;
  private static final int METHODID_GET_SESSION_MESSAGES = 21;
  private static final int METHODID_DELETE_MESSAGES = 22;
  private static final int METHODID_CLEAR_SESSION = 23;
  private static final int METHODID_GET_SESSION_ATTACHMENT = 24;
  private static final int METHODID_WATCH = 25;

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
        case METHODID_REMEMBER:
          serviceImpl.remember((dev.memoryd.v1.RememberRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.RememberResponse>) responseObserver);
          break;
        case METHODID_REMEMBER_BATCH:
          serviceImpl.rememberBatch((dev.memoryd.v1.RememberBatchRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.RememberBatchResponse>) responseObserver);
          break;
        case METHODID_RECALL:
          serviceImpl.recall((dev.memoryd.v1.RecallRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.RecallResponse>) responseObserver);
          break;
        case METHODID_GET_MEMORY:
          serviceImpl.getMemory((dev.memoryd.v1.GetMemoryRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.GetMemoryResponse>) responseObserver);
          break;
        case METHODID_LIST_MEMORIES:
          serviceImpl.listMemories((dev.memoryd.v1.ListMemoriesRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.ListMemoriesResponse>) responseObserver);
          break;
        case METHODID_UPDATE_MEMORY:
          serviceImpl.updateMemory((dev.memoryd.v1.UpdateMemoryRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.UpdateMemoryResponse>) responseObserver);
          break;
        case METHODID_FORGET_MEMORIES:
          serviceImpl.forgetMemories((dev.memoryd.v1.ForgetMemoriesRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.ForgetMemoriesResponse>) responseObserver);
          break;
        case METHODID_SET_MEMORY:
          serviceImpl.setMemory((dev.memoryd.v1.SetMemoryRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.SetMemoryResponse>) responseObserver);
          break;
        case METHODID_GET_KEY:
          serviceImpl.getKey((dev.memoryd.v1.GetKeyRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.GetKeyResponse>) responseObserver);
          break;
        case METHODID_LIST_KEYS:
          serviceImpl.listKeys((dev.memoryd.v1.ListKeysRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.ListKeysResponse>) responseObserver);
          break;
        case METHODID_KEY_HISTORY:
          serviceImpl.keyHistory((dev.memoryd.v1.KeyHistoryRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.KeyHistoryResponse>) responseObserver);
          break;
        case METHODID_SET_WORKING_MEMORY:
          serviceImpl.setWorkingMemory((dev.memoryd.v1.SetWorkingMemoryRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.SetWorkingMemoryResponse>) responseObserver);
          break;
        case METHODID_GET_WORKING_MEMORY:
          serviceImpl.getWorkingMemory((dev.memoryd.v1.GetWorkingMemoryRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.GetWorkingMemoryResponse>) responseObserver);
          break;
        case METHODID_DELETE_WORKING_MEMORY:
          serviceImpl.deleteWorkingMemory((dev.memoryd.v1.DeleteWorkingMemoryRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.DeleteWorkingMemoryResponse>) responseObserver);
          break;
        case METHODID_LIST_WORKING_MEMORY_SCOPES:
          serviceImpl.listWorkingMemoryScopes((dev.memoryd.v1.ListWorkingMemoryScopesRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.ListWorkingMemoryScopesResponse>) responseObserver);
          break;
        case METHODID_GET_PROFILE:
          serviceImpl.getProfile((dev.memoryd.v1.GetProfileRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.GetProfileResponse>) responseObserver);
          break;
        case METHODID_SET_PROFILE:
          serviceImpl.setProfile((dev.memoryd.v1.SetProfileRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.SetProfileResponse>) responseObserver);
          break;
        case METHODID_APPEND_MESSAGES:
          serviceImpl.appendMessages((dev.memoryd.v1.AppendMessagesRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.AppendMessagesResponse>) responseObserver);
          break;
        case METHODID_GET_SESSION_WINDOW:
          serviceImpl.getSessionWindow((dev.memoryd.v1.GetSessionWindowRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.GetSessionWindowResponse>) responseObserver);
          break;
        case METHODID_INJECT_INSTRUCTION:
          serviceImpl.injectInstruction((dev.memoryd.v1.InjectInstructionRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.InjectInstructionResponse>) responseObserver);
          break;
        case METHODID_END_SESSION:
          serviceImpl.endSession((dev.memoryd.v1.EndSessionRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.EndSessionResponse>) responseObserver);
          break;
        case METHODID_GET_SESSION_MESSAGES:
          serviceImpl.getSessionMessages((dev.memoryd.v1.GetSessionMessagesRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.GetSessionMessagesResponse>) responseObserver);
          break;
        case METHODID_DELETE_MESSAGES:
          serviceImpl.deleteMessages((dev.memoryd.v1.DeleteMessagesRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.DeleteMessagesResponse>) responseObserver);
          break;
        case METHODID_CLEAR_SESSION:
          serviceImpl.clearSession((dev.memoryd.v1.ClearSessionRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.ClearSessionResponse>) responseObserver);
          break;
        case METHODID_GET_SESSION_ATTACHMENT:
          serviceImpl.getSessionAttachment((dev.memoryd.v1.GetSessionAttachmentRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.GetSessionAttachmentResponse>) responseObserver);
          break;
        case METHODID_WATCH:
          serviceImpl.watch((dev.memoryd.v1.WatchRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.WatchResponse>) responseObserver);
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
          getRememberMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.RememberRequest,
              dev.memoryd.v1.RememberResponse>(
                service, METHODID_REMEMBER)))
        .addMethod(
          getRememberBatchMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.RememberBatchRequest,
              dev.memoryd.v1.RememberBatchResponse>(
                service, METHODID_REMEMBER_BATCH)))
        .addMethod(
          getRecallMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.RecallRequest,
              dev.memoryd.v1.RecallResponse>(
                service, METHODID_RECALL)))
        .addMethod(
          getGetMemoryMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.GetMemoryRequest,
              dev.memoryd.v1.GetMemoryResponse>(
                service, METHODID_GET_MEMORY)))
        .addMethod(
          getListMemoriesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.ListMemoriesRequest,
              dev.memoryd.v1.ListMemoriesResponse>(
                service, METHODID_LIST_MEMORIES)))
        .addMethod(
          getUpdateMemoryMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.UpdateMemoryRequest,
              dev.memoryd.v1.UpdateMemoryResponse>(
                service, METHODID_UPDATE_MEMORY)))
        .addMethod(
          getForgetMemoriesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.ForgetMemoriesRequest,
              dev.memoryd.v1.ForgetMemoriesResponse>(
                service, METHODID_FORGET_MEMORIES)))
        .addMethod(
          getSetMemoryMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.SetMemoryRequest,
              dev.memoryd.v1.SetMemoryResponse>(
                service, METHODID_SET_MEMORY)))
        .addMethod(
          getGetKeyMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.GetKeyRequest,
              dev.memoryd.v1.GetKeyResponse>(
                service, METHODID_GET_KEY)))
        .addMethod(
          getListKeysMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.ListKeysRequest,
              dev.memoryd.v1.ListKeysResponse>(
                service, METHODID_LIST_KEYS)))
        .addMethod(
          getKeyHistoryMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.KeyHistoryRequest,
              dev.memoryd.v1.KeyHistoryResponse>(
                service, METHODID_KEY_HISTORY)))
        .addMethod(
          getSetWorkingMemoryMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.SetWorkingMemoryRequest,
              dev.memoryd.v1.SetWorkingMemoryResponse>(
                service, METHODID_SET_WORKING_MEMORY)))
        .addMethod(
          getGetWorkingMemoryMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.GetWorkingMemoryRequest,
              dev.memoryd.v1.GetWorkingMemoryResponse>(
                service, METHODID_GET_WORKING_MEMORY)))
        .addMethod(
          getDeleteWorkingMemoryMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.DeleteWorkingMemoryRequest,
              dev.memoryd.v1.DeleteWorkingMemoryResponse>(
                service, METHODID_DELETE_WORKING_MEMORY)))
        .addMethod(
          getListWorkingMemoryScopesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.ListWorkingMemoryScopesRequest,
              dev.memoryd.v1.ListWorkingMemoryScopesResponse>(
                service, METHODID_LIST_WORKING_MEMORY_SCOPES)))
        .addMethod(
          getGetProfileMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.GetProfileRequest,
              dev.memoryd.v1.GetProfileResponse>(
                service, METHODID_GET_PROFILE)))
        .addMethod(
          getSetProfileMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.SetProfileRequest,
              dev.memoryd.v1.SetProfileResponse>(
                service, METHODID_SET_PROFILE)))
        .addMethod(
          getAppendMessagesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.AppendMessagesRequest,
              dev.memoryd.v1.AppendMessagesResponse>(
                service, METHODID_APPEND_MESSAGES)))
        .addMethod(
          getGetSessionWindowMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.GetSessionWindowRequest,
              dev.memoryd.v1.GetSessionWindowResponse>(
                service, METHODID_GET_SESSION_WINDOW)))
        .addMethod(
          getInjectInstructionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.InjectInstructionRequest,
              dev.memoryd.v1.InjectInstructionResponse>(
                service, METHODID_INJECT_INSTRUCTION)))
        .addMethod(
          getEndSessionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.EndSessionRequest,
              dev.memoryd.v1.EndSessionResponse>(
                service, METHODID_END_SESSION)))
        .addMethod(
          getGetSessionMessagesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.GetSessionMessagesRequest,
              dev.memoryd.v1.GetSessionMessagesResponse>(
                service, METHODID_GET_SESSION_MESSAGES)))
        .addMethod(
          getDeleteMessagesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.DeleteMessagesRequest,
              dev.memoryd.v1.DeleteMessagesResponse>(
                service, METHODID_DELETE_MESSAGES)))
        .addMethod(
          getClearSessionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.ClearSessionRequest,
              dev.memoryd.v1.ClearSessionResponse>(
                service, METHODID_CLEAR_SESSION)))
        .addMethod(
          getGetSessionAttachmentMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.GetSessionAttachmentRequest,
              dev.memoryd.v1.GetSessionAttachmentResponse>(
                service, METHODID_GET_SESSION_ATTACHMENT)))
        .addMethod(
          getWatchMethod(),
          io.grpc.stub.ServerCalls.asyncServerStreamingCall(
            new MethodHandlers<
              dev.memoryd.v1.WatchRequest,
              dev.memoryd.v1.WatchResponse>(
                service, METHODID_WATCH)))
        .build();
  }

  private static abstract class MemoryServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    MemoryServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.memoryd.v1.MemoryServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("MemoryService");
    }
  }

  private static final class MemoryServiceFileDescriptorSupplier
      extends MemoryServiceBaseDescriptorSupplier {
    MemoryServiceFileDescriptorSupplier() {}
  }

  private static final class MemoryServiceMethodDescriptorSupplier
      extends MemoryServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    MemoryServiceMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (MemoryServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new MemoryServiceFileDescriptorSupplier())
              .addMethod(getRememberMethod())
              .addMethod(getRememberBatchMethod())
              .addMethod(getRecallMethod())
              .addMethod(getGetMemoryMethod())
              .addMethod(getListMemoriesMethod())
              .addMethod(getUpdateMemoryMethod())
              .addMethod(getForgetMemoriesMethod())
              .addMethod(getSetMemoryMethod())
              .addMethod(getGetKeyMethod())
              .addMethod(getListKeysMethod())
              .addMethod(getKeyHistoryMethod())
              .addMethod(getSetWorkingMemoryMethod())
              .addMethod(getGetWorkingMemoryMethod())
              .addMethod(getDeleteWorkingMemoryMethod())
              .addMethod(getListWorkingMemoryScopesMethod())
              .addMethod(getGetProfileMethod())
              .addMethod(getSetProfileMethod())
              .addMethod(getAppendMessagesMethod())
              .addMethod(getGetSessionWindowMethod())
              .addMethod(getInjectInstructionMethod())
              .addMethod(getEndSessionMethod())
              .addMethod(getGetSessionMessagesMethod())
              .addMethod(getDeleteMessagesMethod())
              .addMethod(getClearSessionMethod())
              .addMethod(getGetSessionAttachmentMethod())
              .addMethod(getWatchMethod())
              .build();
        }
      }
    }
    return result;
  }
}
