package dev.memoryd.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.memoryd.v1.BuildSnapshotRequest;
import dev.memoryd.v1.BuildSnapshotResponse;
import dev.memoryd.v1.Memory;
import dev.memoryd.v1.MemoryServiceGrpc;
import dev.memoryd.v1.RecallRequest;
import dev.memoryd.v1.RecallResponse;
import dev.memoryd.v1.RecallResult;
import dev.memoryd.v1.RememberRequest;
import dev.memoryd.v1.SnapshotServiceGrpc;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * End-to-end: Remember, Recall and BuildSnapshot through the generated stubs against a
 * real daemon at MEMORYD_ADDRESS (tests/e2e starts one and runs {@code mvn test}).
 */
class RememberRecallSnapshotTest {
  private static final List<String> FACTS =
      List.of(
          "The user prefers a dark blue colour scheme for slides",
          "The weekly team meeting moved to Thursday at 10:00",
          "Deployments to production need two approvals");

  private ManagedChannel channel;

  @BeforeEach
  void connect() {
    String address = System.getenv("MEMORYD_ADDRESS");
    assertNotNull(address, "set MEMORYD_ADDRESS to a running memoryd (host:port); `make test` does this");
    channel = Grpc.newChannelBuilder(address, InsecureChannelCredentials.create()).build();
  }

  @AfterEach
  void close() throws InterruptedException {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  @Test
  void remembersRecallsAndBuildsASnapshot() {
    var memory = MemoryServiceGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
    var snapshots = SnapshotServiceGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
    String agentId = "e2e-java-" + ProcessHandle.current().pid();

    List<String> ids = new ArrayList<>();
    for (String content : FACTS) {
      Memory m =
          memory
              .remember(RememberRequest.newBuilder().setAgentId(agentId).setContent(content).addTags("e2e").build())
              .getMemory();
      assertEquals(content, m.getContent());
      assertEquals(agentId, m.getAgentId());
      assertFalse(m.getId().isEmpty(), "the daemon assigns an id");
      ids.add(m.getId());
    }

    RecallResponse recall =
        memory.recall(
            RecallRequest.newBuilder()
                .setAgentId(agentId)
                .setQuery("which colours does the user like on slides?")
                .setLimit(3)
                .build());
    assertEquals(FACTS.size(), recall.getResultsCount());
    RecallResult top = recall.getResults(0);
    assertEquals(ids.get(0), top.getMemory().getId(), "the remembered colour preference is the top hit");
    assertEquals(FACTS.get(0), top.getMemory().getContent());
    for (RecallResult r : recall.getResultsList()) {
      assertTrue(r.getScore() <= top.getScore(), "results are best first");
    }
    assertTrue(top.getScore() > 0 && top.getComponents().getSimilarity() > 0);
    assertFalse(recall.getEmbeddingModel().isEmpty(), "the response names the embedding model");

    try {
      BuildSnapshotResponse snapshot =
          snapshots.buildSnapshot(
              BuildSnapshotRequest.newBuilder()
                  .setAgentId(agentId)
                  .setTrigger("prepare the slides for the review")
                  .setTokenBudget(500)
                  .build());
      assertTrue(snapshot.getText().contains(FACTS.get(0)), "snapshot text lacks the fact:\n" + snapshot.getText());
      assertTrue(snapshot.getTokensUsed() <= snapshot.getTokenBudget());
      System.out.printf("BuildSnapshot: OK (%d tokens)%n", snapshot.getTokensUsed());
    } catch (StatusRuntimeException e) {
      Status status = e.getStatus();
      if (status.getCode() != Status.Code.UNIMPLEMENTED) {
        throw e;
      }
      String description = String.valueOf(status.getDescription());
      assertTrue(description.contains("not implemented yet"), description);
      System.out.printf("BuildSnapshot: UNIMPLEMENTED (%s)%n", description);
    }
  }
}
