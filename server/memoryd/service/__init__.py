"""The feature services, one package per feature, layered (pyproject's import contract):

- ``lifecycle`` | ``snapshot``: whole-agent operations and what an agent run starts with;
- ``sessions``: short-term memory (message logs, windows, summaries, extraction);
- ``keyed`` : ``agent_state`` : ``memories``: keyed slots, working memory and profiles,
  long-term memories;
- ``common``: what every feature uses (validation, pagination, quotas, tokens, the LLM
  client, write batching, locks, leases, record writes, scanning).

A package imports only from packages below it (siblings joined by ``:`` may import each
other; those joined by ``|`` may not).
"""
