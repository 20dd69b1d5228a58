/**
 * memoryd's TypeScript client: the ts-proto messages and @grpc/grpc-js service clients
 * generated from proto/ (in ./gen, do not edit), plus `connect()`, a thin promise layer
 * over those clients so that unary calls can be awaited.
 */
import {
  type CallOptions,
  Channel,
  type ChannelCredentials,
  type ChannelOptions,
  type Client,
  credentials as grpcCredentials,
  Metadata,
  type ServiceError,
} from "@grpc/grpc-js";

import { LifecycleServiceClient, LifecycleServiceService } from "./gen/memoryd/v1/lifecycle_service";
import { MemoryServiceClient, MemoryServiceService } from "./gen/memoryd/v1/memory_service";
import { SnapshotServiceClient, SnapshotServiceService } from "./gen/memoryd/v1/snapshot_service";

export * from "./gen/memoryd/v1/common";
export * from "./gen/memoryd/v1/lifecycle_service";
export * from "./gen/memoryd/v1/memory_service";
export * from "./gen/memoryd/v1/snapshot_service";
// Every generated module declares these; name one module's to settle the ambiguity.
export {
  type DeepPartial,
  type Exact,
  type MessageFns,
  protobufFileName,
  protobufPackage,
} from "./gen/memoryd/v1/common";

/** Per-call options of the promise layer. */
export interface UnaryOptions {
  /** Absolute deadline, or milliseconds from now. */
  deadline?: Date | number;
  metadata?: Metadata;
  callOptions?: Partial<CallOptions>;
}

type UnaryKeys<S> = {
  [K in keyof S]: S[K] extends { requestStream: false; responseStream: false } ? K : never;
}[keyof S];
type RequestOf<D> = D extends { requestSerialize: (value: infer R) => Buffer } ? R : never;
type ResponseOf<D> = D extends { responseDeserialize: (value: Buffer) => infer R } ? R : never;

/** The unary methods of a generated service, returning promises. */
export type PromiseClient<S> = {
  [K in UnaryKeys<S>]: (request: RequestOf<S[K]>, options?: UnaryOptions) => Promise<ResponseOf<S[K]>>;
};

type UnaryMethod = (
  request: unknown,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (error: ServiceError | null, response: unknown) => void,
) => unknown;

/** Wraps the unary methods of a generated grpc-js client so they return promises. */
export function promiseClient<S extends object>(client: Client, service: S): PromiseClient<S> {
  const wrapped: Record<string, unknown> = {};
  for (const [name, definition] of Object.entries(service)) {
    const { requestStream, responseStream } = definition as { requestStream: boolean; responseStream: boolean };
    if (requestStream || responseStream) continue;
    const method = (client as unknown as Record<string, UnaryMethod>)[name].bind(client);
    wrapped[name] = (request: unknown, options: UnaryOptions = {}) =>
      new Promise((resolve, reject) => {
        const callOptions: Partial<CallOptions> = { ...options.callOptions };
        if (options.deadline !== undefined) {
          callOptions.deadline =
            typeof options.deadline === "number" ? Date.now() + options.deadline : options.deadline;
        }
        method(request, options.metadata ?? new Metadata(), callOptions, (error, response) =>
          error ? reject(error) : resolve(response),
        );
      });
  }
  return wrapped as PromiseClient<S>;
}

/** The three memoryd services over one channel. */
export interface Memoryd {
  memory: PromiseClient<MemoryServiceService>;
  snapshot: PromiseClient<SnapshotServiceService>;
  lifecycle: PromiseClient<LifecycleServiceService>;
  /** The callback-style generated clients, for streaming RPCs. */
  raw: { memory: MemoryServiceClient; snapshot: SnapshotServiceClient; lifecycle: LifecycleServiceClient };
  close(): void;
}

/**
 * Connects to a daemon at `host:port` or `unix:/path/to.sock` (insecure by default: the
 * sidecar listens on loopback or a Unix socket).
 */
export function connect(
  address: string,
  credentials: ChannelCredentials = grpcCredentials.createInsecure(),
  options: ChannelOptions = {},
): Memoryd {
  const channel = new Channel(address, credentials, options);
  const raw = {
    memory: new MemoryServiceClient(address, credentials, { channelOverride: channel }),
    snapshot: new SnapshotServiceClient(address, credentials, { channelOverride: channel }),
    lifecycle: new LifecycleServiceClient(address, credentials, { channelOverride: channel }),
  };
  return {
    memory: promiseClient(raw.memory, MemoryServiceService),
    snapshot: promiseClient(raw.snapshot, SnapshotServiceService),
    lifecycle: promiseClient(raw.lifecycle, LifecycleServiceService),
    raw,
    close: () => channel.close(),
  };
}
