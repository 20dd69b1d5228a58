/**
 * End-to-end: Remember, Recall and BuildSnapshot through the generated client against a
 * real daemon at MEMORYD_ADDRESS (tests/e2e starts one and runs `npm test`).
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";

import { type ServiceError, status } from "@grpc/grpc-js";

import { BuildSnapshotRequest, connect, RecallRequest, RememberRequest } from "../src";

const address = process.env.MEMORYD_ADDRESS;
assert.ok(address, "set MEMORYD_ADDRESS to a running memoryd (host:port); `make test` does this");
const memoryd = connect(address);
after(() => memoryd.close());

const agentId = `e2e-typescript-${process.pid}`;
const CALL = { deadline: 30_000 };
const FACTS = [
  "The user prefers a dark blue colour scheme for slides",
  "The weekly team meeting moved to Thursday at 10:00",
  "Deployments to production need two approvals",
];

test("remember, recall and build a snapshot", async () => {
  const ids: string[] = [];
  for (const content of FACTS) {
    const response = await memoryd.memory.remember(RememberRequest.fromPartial({ agentId, content, tags: ["e2e"] }), CALL);
    assert.equal(response.memory?.content, content);
    assert.equal(response.memory?.agentId, agentId);
    assert.ok(response.memory?.id, "the daemon assigns an id");
    ids.push(response.memory.id);
  }

  const recall = await memoryd.memory.recall(
    RecallRequest.fromPartial({ agentId, query: "which colours does the user like on slides?", limit: 3 }),
    CALL,
  );
  assert.equal(recall.results.length, FACTS.length);
  const [top, ...rest] = recall.results;
  assert.equal(top.memory?.id, ids[0], "the remembered colour preference is the top hit");
  assert.equal(top.memory?.content, FACTS[0]);
  assert.ok(top.score > 0 && rest.every((r) => r.score <= top.score), "results are best first");
  assert.ok(top.components && top.components.similarity > 0);
  assert.ok(recall.embeddingModel, "the response names the embedding model");

  try {
    const snapshot = await memoryd.snapshot.buildSnapshot(
      BuildSnapshotRequest.fromPartial({ agentId, trigger: "prepare the slides for the review", tokenBudget: 500 }),
      CALL,
    );
    assert.ok(snapshot.text.includes(FACTS[0]), `snapshot text lacks the remembered fact:\n${snapshot.text}`);
    assert.ok(snapshot.tokensUsed <= snapshot.tokenBudget);
    console.log(`BuildSnapshot: OK (${snapshot.tokensUsed} tokens)`);
  } catch (error) {
    const { code, details } = error as ServiceError;
    if (code !== status.UNIMPLEMENTED) throw error;
    assert.match(details, /not implemented yet/);
    console.log(`BuildSnapshot: UNIMPLEMENTED (${details})`);
  }
});
