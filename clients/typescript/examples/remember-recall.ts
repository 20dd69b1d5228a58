/**
 * Remembers two facts and recalls the one a question is about.
 *
 *   npm run build && MEMORYD_ADDRESS=127.0.0.1:50051 npm run example
 */
import { connect, RecallRequest, RememberRequest } from "../src";

async function main(): Promise<void> {
  const memoryd = connect(process.env.MEMORYD_ADDRESS ?? "127.0.0.1:50051");
  try {
    for (const content of [
      "The user prefers a dark blue colour scheme for slides",
      "The weekly team meeting moved to Thursday at 10:00",
    ]) {
      await memoryd.memory.remember(RememberRequest.fromPartial({ agentId: "example", content }));
    }
    const { results } = await memoryd.memory.recall(
      RecallRequest.fromPartial({ agentId: "example", query: "which colours does the user like?", limit: 1 }),
      { deadline: 10_000 },
    );
    for (const { memory, score } of results) {
      console.log(`${score.toFixed(3)}  ${memory?.content}`);
    }
  } finally {
    memoryd.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
