"""The Agents pack as ``launch ls`` lists it (see kernel.sdk.catalogue)."""

from kernel.sdk.catalogue import Pack

PACK = Pack(
    name="agent",
    title="Agents",
    source="framebus: LLM, scripted, random, replay and human agents",
    nodes=("agent.llm", "agent.random", "agent.idle", "agent.scripted", "agent.replay", "agent.human", "agent.web_random", "agent.web"),
)
