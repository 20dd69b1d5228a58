package dev.memoryd.examples;

import dev.memoryd.v1.MemoryServiceGrpc;
import dev.memoryd.v1.RecallRequest;
import dev.memoryd.v1.RecallResult;
import dev.memoryd.v1.RememberRequest;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Remembers two facts and recalls the one a question is about.
 *
 * <pre>
 * mvn -q compile && MEMORYD_ADDRESS=127.0.0.1:50051 \
 *   java -cp target/classes:$(cat target/classpath.txt) dev.memoryd.examples.RememberRecall
 * </pre>
 */
public final class RememberRecall {
  private RememberRecall() {}

  public static void main(String[] args) throws InterruptedException {
    String address = System.getenv().getOrDefault("MEMORYD_ADDRESS", "127.0.0.1:50051");
    ManagedChannel channel = Grpc.newChannelBuilder(address, InsecureChannelCredentials.create()).build();
    try {
      MemoryServiceGrpc.MemoryServiceBlockingStub memory =
          MemoryServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
      for (String content :
          List.of(
              "The user prefers a dark blue colour scheme for slides",
              "The weekly team meeting moved to Thursday at 10:00")) {
        memory.remember(RememberRequest.newBuilder().setAgentId("example").setContent(content).build());
      }
      var recall =
          memory.recall(
              RecallRequest.newBuilder()
                  .setAgentId("example")
                  .setQuery("which colours does the user like?")
                  .setLimit(1)
                  .build());
      for (RecallResult result : recall.getResultsList()) {
        System.out.printf("%.3f  %s%n", result.getScore(), result.getMemory().getContent());
      }
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }
}
