"""``placement:`` on its own (milliseconds each): the schema and its errors at their lines, and the plan
that maps it onto a Ray cluster's machines and Ray's scheduling strategies, on machines described
as ``ray.nodes()`` describes them (no Ray instance)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kernel.launchfile import LaunchError, load
from kernel.tools.ray_backend import RayResources, demand
from kernel.tools.ray_placement import Machine, actor_options, machines, plan, render
from tests.helpers import launch

ID_A, ID_B, ID_C = "a" * 56, "b" * 56, "c" * 56


def ray_node(node_id: str, ip: str, resources: dict[str, float], labels: dict[str, str] | None = None,
             hostname: str = "vm", alive: bool = True) -> dict:
    return {"NodeID": node_id, "Alive": alive, "NodeManagerAddress": ip, "NodeManagerHostname": hostname,
            "Resources": {"CPU": 4.0, "memory": 8 * 2.0**30, "object_store_memory": 2.0**28, f"node:{ip}": 1.0,
                          **resources},
            "Labels": {"ray.io/node-id": node_id, **(labels or {})}}


# the two-hosts cluster of scripts/two_hosts.sh (one machine, so one hostname), plus a GPU machine
CLUSTER = machines([
    ray_node(ID_B, "198.18.0.2", {"hostB": 1.0}, {"zone": "b"}),
    ray_node(ID_A, "198.18.0.1", {"hostA": 1.0, "node:__internal_head__": 1.0}, {"zone": "a"}),
    ray_node(ID_C, "198.18.0.10", {"GPU": 1.0, "accelerator_type:A100": 1.0}, {"zone": "b"}, hostname="gpu1"),
    ray_node("d" * 56, "198.18.0.4", {"hostD": 1.0}, alive=False),
])
A, B, C = CLUSTER


def write(tmp_path: Path, text: str, name: str = "p.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def lf_of(tmp_path: Path, nodes: str, **kw):
    return load(write(tmp_path, "include: [hello.yaml]\nnodes:\n" + textwrap.dedent(nodes)), **kw)


def where(landings) -> dict[str, list[str]]:
    return {x.node: [m.ip for m in x.machines] for x in landings}


# --- the machines ------------------------------------------------------------------------------

def test_machines_are_the_live_ones_in_address_order_known_by_their_custom_resources():
    assert [m.ip for m in CLUSTER] == ["198.18.0.1", "198.18.0.2", "198.18.0.10"]
    assert A.names == ["hostA"] and C.names == []  # Ray's own resources (GPU, accelerator_type, node:) are not names
    assert str(A) == "198.18.0.1 [hostA]" and str(C) == "198.18.0.10 (gpu1)"
    assert A.labels == {"zone": "a"}  # Ray's own ray.io/ labels left out


# --- the schema --------------------------------------------------------------------------------

def test_placement_is_typed_and_written_back_into_the_resolved_file(tmp_path: Path):
    lf = lf_of(tmp_path, """\
        - id: env
          placement: {host: hostA}
        - id: agent
          placement: {labels: {zone: b, tier: 2}, soft: true}
        """)
    assert lf.node("env").placement.host == "hostA" and not lf.node("env").placement.soft
    assert lf.node("agent").placement.labels == {"zone": "b", "tier": "2"}  # labels are strings, as Ray's
    again = load(write(tmp_path, lf.to_yaml(), "resolved.yaml"))
    assert again.node("agent").placement == lf.node("agent").placement
    assert again.node("judge").placement is None


@pytest.mark.parametrize("placement, line_col, words", [
    ("{host: hostA, labels: {zone: a}}", (4, 14), "not both"),
    ("{soft: true}", (4, 14), "placement needs 'host'"),
    ("{host: hostA, spread: true}", (4, 14), "spread over 'labels'"),
    ("{spread: true}", (4, 23), "node 'env' is in no replica group"),
    ("{hots: hostA}", (4, 15), "unknown key 'hots'"),
    ("{host: hostA, soft: maybe}", (4, 34), "expected true or false"),
    ("{host: ''}", (4, 21), "at least 1"),
])
def test_a_bad_placement_is_reported_at_its_line(tmp_path: Path, placement: str, line_col: tuple[int, int],
                                                 words: str):
    with pytest.raises(LaunchError) as err:
        lf_of(tmp_path, f"- id: env\n  placement: {placement}\n")
    assert (err.value.line, err.value.column) == line_col, str(err.value)
    assert words in str(err.value) and err.value.key.startswith("nodes[0].placement"), str(err.value)


# --- the plan ----------------------------------------------------------------------------------

def test_a_host_is_a_custom_resource_an_address_a_hostname_or_a_node_id(tmp_path: Path):
    lf = lf_of(tmp_path, f"""\
        - id: env
          placement: {{host: hostA}}
        - id: agent
          placement: {{host: 198.18.0.2}}
        - id: judge
          placement: {{host: {ID_C}, soft: true}}
        - id: gpu
          uses: hello.judge
          placement: {{host: gpu1}}
        """)
    landings = plan(lf, CLUSTER, demand)
    assert where(landings) == {"env": ["198.18.0.1"], "agent": ["198.18.0.2"], "judge": ["198.18.0.10"],
                               "gpu": ["198.18.0.10"]}
    assert [x.strategy for x in landings] == [("node", ID_A, False), ("node", ID_B, False), ("node", ID_C, True),
                                              ("node", ID_C, False)]
    assert landings[0].record() == {"asked": "host: hostA", "planned": ["198.18.0.1"], "soft": False}
    assert render(landings)[0] == "  env    198.18.0.1 [hostA]  (host: hostA)"
    assert render(landings)[2].endswith("198.18.0.10 (gpu1)  (host: " + ID_C + ", soft)")


def test_an_unknown_host_names_the_file_line_node_and_the_clusters_machines(tmp_path: Path):
    lf = lf_of(tmp_path, "- id: env\n  uses: hello.env\n  placement:\n    host: hostb\n")
    problem = plan(lf, CLUSTER, demand)[0].problem
    assert problem is not None
    assert (problem.file.name, problem.line, problem.column, problem.key) == ("p.yaml", 6, 11, "nodes[0].placement.host")
    text = str(problem)
    assert "node 'env': no machine of the cluster is known as 'hostb'" in text
    assert "198.18.0.1 [hostA], 198.18.0.2 [hostB], 198.18.0.10 (gpu1)" in text
    assert problem.suggestion == "hostB"
    assert "198.18.0.4" not in text  # a dead machine is no place


def test_a_host_name_that_fits_several_machines_is_refused(tmp_path: Path):
    lf = lf_of(tmp_path, "- id: env\n  placement: {host: vm}\n")  # both namespaces share the machine's hostname
    problem = plan(lf, CLUSTER, demand)[0].problem
    assert problem is not None and "'vm' fits 2 machines (198.18.0.1 [hostA], 198.18.0.2 [hostB])" in str(problem)


def test_a_hard_host_that_lacks_the_resources_names_the_key_and_what_it_has(tmp_path: Path):
    lf = lf_of(tmp_path, "- id: agent\n  resources: {num_gpus: 1}\n  placement: {host: hostB}\n",
               resources=RayResources)
    problem = plan(lf, CLUSTER, demand)[1].problem
    assert problem is not None and problem.key == "nodes[0].resources" and problem.line == 4
    text = str(problem)
    assert "node 'agent' asks Ray for {GPU 1} where its placement allows, but 198.18.0.2 [hostB]: {GPU 0}" in text
    assert "198.18.0.10 (gpu1): {GPU 1}" in text  # and what the cluster has


def test_a_soft_host_that_lacks_the_resources_falls_back_to_a_machine_that_has_them(tmp_path: Path):
    lf = lf_of(tmp_path, "- id: agent\n  resources: {num_gpus: 1}\n  placement: {host: hostB, soft: true}\n",
               resources=RayResources)
    landing = plan(lf, CLUSTER, demand)[1]
    assert landing.problem is None and [m.ip for m in landing.machines] == ["198.18.0.10"]
    assert landing.strategy == ("node", ID_B, True) and "soft" in landing.note


def test_hard_nodes_pinned_to_one_machine_must_fit_it_together(tmp_path: Path):
    lf = lf_of(tmp_path, """\
        - id: env
          resources: {num_cpus: 3}
          placement: {host: hostA}
        - id: agent
          resources: {num_cpus: 2}
          placement: {host: hostA}
        - id: judge
          resources: {num_cpus: 2}
          placement: {host: hostA, soft: true}
        """, resources=RayResources)
    env, agent, judge = plan(lf, CLUSTER, demand)
    assert env.problem is None
    assert agent.problem is not None and agent.problem.key == "nodes[1].resources"
    assert "'env' already takes {CPU 3} of {CPU 4}" in str(agent.problem)
    assert judge.problem is None and "Ray uses another machine" in judge.note


def test_a_machine_full_now_is_a_note_not_a_problem(tmp_path: Path):
    busy = machines([ray_node(ID_A, "198.18.0.1", {"hostA": 1.0})], free={ID_A: {"CPU": 0.5}})
    lf = lf_of(tmp_path, "- id: env\n  resources: {num_cpus: 1}\n  placement: {host: hostA}\n",
               resources=RayResources)
    landing = plan(lf, busy, demand)[0]
    assert landing.problem is None and "no room there now (free {CPU 0.5}): it would wait" in landing.note


def test_spread_deals_copies_over_the_machines_and_a_copys_nodes_share_one(tmp_path: Path):
    lf = load(write(tmp_path, """\
        nodes:
          - group: w
            replicas: 3
            nodes:
              - {id: env, uses: hello.env, inputs: {action: agent/action}, placement: {spread: true}}
              - {id: agent, uses: hello.agent, inputs: {obs: env/obs}, placement: {spread: true, labels: {zone: b}}}
          - {id: judge, uses: hello.judge, inputs: {obs: env/obs}}
        """))
    landings = plan(lf, CLUSTER, demand)
    got = where(landings)
    assert [got[f"env-{i}"] for i in range(3)] == [["198.18.0.1"], ["198.18.0.2"], ["198.18.0.10"]]
    assert [got[f"agent-{i}"] for i in range(3)] == [["198.18.0.2"], ["198.18.0.10"], ["198.18.0.2"]]
    assert got["judge"] == ["198.18.0.1", "198.18.0.2", "198.18.0.10"]  # Ray's choice
    agent2 = landings[2 * 2 + 1]
    assert agent2.asked == "labels: zone=b, spread: copy 2 of 3" and landings[0].asked == "spread: copy 0 of 3"
    assert "3 copies over 2 machines" in agent2.note
    assert landings[0].strategy == ("node", ID_A, False)


def test_labels_leave_the_choice_among_matching_machines_to_ray(tmp_path: Path):
    lf = lf_of(tmp_path, """\
        - id: env
          placement: {labels: {zone: b}}
        - id: agent
          placement: {labels: {zone: c}}
        - id: judge
          placement: {labels: {zone: c}, soft: true}
        """)
    env, agent, judge = plan(lf, CLUSTER, demand)
    assert [m.ip for m in env.machines] == ["198.18.0.2", "198.18.0.10"] and env.strategy == ("labels", {"zone": "b"}, False)
    assert agent.problem is not None and agent.problem.key == "nodes[1].placement.labels"
    assert "no machine of the cluster has the labels {zone=c} (198.18.0.1 [hostA]: {zone=a};" in str(agent.problem)
    assert judge.problem is None and len(judge.machines) == 3 and judge.strategy == ("labels", {"zone": "c"}, True)


def test_without_placement_an_impossible_request_is_still_refused(tmp_path: Path):
    lf = lf_of(tmp_path, "- id: agent\n  resources: {custom: {unobtainium: 1}}\n", resources=RayResources)
    problem = plan(lf, CLUSTER, demand)[1].problem
    assert problem is not None and problem.line == 4
    assert "node 'agent' asks Ray for {unobtainium 1}, but no machine of the cluster has that much" in str(problem)


def test_copies_of_a_replica_report_the_line_of_the_group_member(tmp_path: Path):
    lf = load(write(tmp_path, """\
        nodes:
          - group: w
            replicas: 2
            nodes:
              - id: env
                uses: hello.env
                placement: {host: nowhere}
        """))
    problems = [x.problem for x in plan(lf, CLUSTER, demand)]
    assert [(p.line, p.key) for p in problems] == [(7, "nodes[0].nodes[0].placement.host")] * 2
    assert "node 'env-1'" in str(problems[1])


# --- onto Ray's options ------------------------------------------------------------------------

def test_landings_become_ray_scheduling_options(tmp_path: Path):
    pytest.importorskip("ray")
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    lf = lf_of(tmp_path, """\
        - id: env
          placement: {host: hostA}
        - id: agent
          placement: {host: hostB, soft: true}
        - id: judge
          placement: {labels: {zone: b}, soft: true}
        """)
    env, agent, judge = (actor_options(x) for x in plan(lf, CLUSTER, demand))
    hard, soft = env["scheduling_strategy"], agent["scheduling_strategy"]
    assert isinstance(hard, NodeAffinitySchedulingStrategy) and isinstance(soft, NodeAffinitySchedulingStrategy)
    assert (hard.node_id, hard.soft, hard._spill_on_unavailable) == (ID_A, False, False)
    assert (soft.node_id, soft.soft, soft._spill_on_unavailable) == (ID_B, True, True)  # full now: elsewhere
    assert judge == {"label_selector": {"zone": "b"}, "fallback_strategy": [{"label_selector": {}}]}
    assert actor_options(None) == {} and actor_options(plan(load("hello"), CLUSTER, demand)[0]) == {}


def test_the_local_backend_ignores_placement_and_says_so(tmp_path: Path):
    path = write(tmp_path, "include: [hello.yaml]\nnodes:\n  - id: env\n    placement: {host: hostA}\n")
    res = launch("validate", str(path), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "the local backend runs every node on this machine, so it ignores the placement of 'env'" in \
        res.stderr.replace("\n", " ")
    res = launch("validate", str(path), "--address", "127.0.0.1:1", cwd=tmp_path)
    assert res.returncode == 2 and "add --backend ray" in res.stderr


def test_machine_describes_itself_without_names_by_hostname():
    m = Machine(ID_A, "10.0.0.1", "box", {"CPU": 1.0})
    assert str(m) == "10.0.0.1 (box)" and m.known_as() == ["10.0.0.1", "box", ID_A]


def test_a_node_that_writes_the_run_folder_itself_is_pinned_to_the_launching_machine(tmp_path: Path):
    """The recorder of --record writes RUN/recording.mcap itself: without a placement it lands where
    the run folder is (every other node ships its results from wherever it lands); a placement of
    its own is kept."""
    from kernel.tools.ray_backend import launching_host
    from kernel.tools.record import with_recorder

    lf = with_recorder(lf_of(tmp_path, "- id: judge\n  placement: {host: hostB}\n"))
    assert [launching_host(n) for n in lf.nodes] == [False, False, False, True]
    landings = plan(lf, CLUSTER, demand, home=ID_A, at_home=launching_host)
    assert where(landings)["recorder"] == ["198.18.0.1"] and where(landings)["judge"] == ["198.18.0.2"]
    recorder = landings[-1]
    assert recorder.strategy == ("node", ID_A, False)
    assert recorder.record() == {"asked": "the launching machine", "planned": ["198.18.0.1"], "soft": False}
    assert render(landings)[-1].endswith("198.18.0.1 [hostA]  (the launching machine); it writes into the run folder")
    assert len(where(plan(lf, CLUSTER, demand))["recorder"]) == 3  # no home known: Ray decides
    from kernel.launchfile.schema import PlacementSpec

    placed = lf.model_copy(update={"nodes": [*lf.nodes[:-1], lf.nodes[-1].model_copy(
        update={"placement": PlacementSpec(host="hostB")})]})
    assert where(plan(placed, CLUSTER, demand, home=ID_A, at_home=launching_host))["recorder"] == ["198.18.0.2"]
    gone = plan(lf, [B, C], demand, home=ID_A, at_home=launching_host)[-1]  # the launching machine left
    assert gone.problem is not None and "runs on the launching machine, which is not among" in str(gone.problem)
