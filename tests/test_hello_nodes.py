"""The hello pack's nodes on their own, as docs/nodes.md shows."""

from kernel.testing import Harness


async def test_agent_moves_toward_the_goal():
    async with Harness(quiet=True) as h:
        h.add("agent", "nodes.agent.rule:HelloAgent", inputs={"obs": "probe/obs"})
        probe = h.probe(inputs={"action": "agent/action"}, outputs=["obs"])
        await h.start()
        await probe.publish("obs", {"position": 0, "target": 3}, step=0)
        msg = await probe.recv("action")
        assert msg.body == "right" and msg.step == 0
        await probe.publish("obs", {"position": 5, "target": 3}, step=1)
        msg = await probe.recv("action")
        assert msg.body == "left" and msg.step == 1


async def test_judge_ends_each_episode_with_its_score():
    async with Harness(quiet=True, episodes=1) as h:
        h.add("judge", "nodes.judge.hello:HelloJudge", inputs={"step": "probe/step"})
        probe = h.probe(outputs=["step"])
        await h.start()
        ep = await probe.next_episode()
        for t in range(4):
            await probe.publish("step", {"episode": ep.id, "t": t, "done": t == 3, "info": {"target": 4, "reached": t == 3}})
        status, _ = await h.wait_finished(10)
        assert status == "completed"
        assert h.kernel.book.records[ep.id]["metrics"] == {"success": 1.0, "steps": 4, "score": 100.0}
