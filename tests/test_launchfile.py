"""Tests for the launch-file loader and the graph renderers.

Error tests assert the exact line (and often column) because pointing at the
right place is the main job of the loader.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kernel import launchfile
from kernel.launchfile import LaunchError, LaunchFile, load, resolve_path
from kernel.tools.graphview import render_mermaid, render_text

DATA = Path(__file__).parent / "data" / "launch"
ENV: dict[str, str] = {}  # keeps the host environment out of the tests


def write(tmp_path: Path, text: str, name: str = "file.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def fails(path: Path, **kwargs) -> LaunchError:
    with pytest.raises(LaunchError) as info:
        load(path, environ=kwargs.pop("environ", ENV), **kwargs)
    return info.value


# --------------------------------------------------------------------------
# valid files


def test_valid_file_resolves() -> None:
    lf = load(DATA / "pipeline.yaml", environ=ENV)
    assert lf.name == "pipeline"
    assert lf.bus.transport == "tcp" and lf.bus.heartbeat == 0.25
    assert lf.bus.host == "127.0.0.1" and lf.bus.max_message_bytes == 64 * 1024 * 1024
    agent = lf.node("agent")
    assert agent.inputs["obs"].sources == ["env/obs"]
    assert agent.inputs["obs"].policy == "latest" and agent.inputs["obs"].size == 1
    assert agent.inputs["score"].policy == "block" and agent.inputs["score"].size == 4
    assert agent.restart.policy == "on-failure" and agent.restart.max_restarts == 5
    assert agent.env == {"OMP_NUM_THREADS": "1"}
    assert lf.node("judge").inputs["obs"].sources == ["env/obs", "agent/action"]
    assert lf.node("judge").inputs["obs"].policy == "fifo"
    assert lf.node("camera").cmd == ["python", "-c", "print('frame')"]
    assert lf.node("camera").clock is not None and lf.node("camera").clock.fps == 30
    env = lf.node("env")
    assert env.clock is not None and env.clock.wait_for == ["agent"]
    assert env.clock.default_action == "noop"
    assert lf.run.episodes == 3 and lf.run.seed == 7 and lf.run.timeout == 60
    assert ("env", "obs", "agent", "obs") in lf.edges()
    assert ("agent", "action", "judge", "obs") in lf.edges()


def test_round_trip_through_to_yaml(tmp_path: Path) -> None:
    lf = load(DATA / "pipeline.yaml", environ=ENV)
    again = load(write(tmp_path, lf.to_yaml(), "resolved.yaml"), environ=ENV)
    assert again.model_dump(exclude={"source"}) == lf.model_dump(exclude={"source"})


def test_round_trip_keeps_replicas_includes_and_literal_dollars(tmp_path: Path) -> None:
    for name in ("replicas.yaml", "override.yaml"):
        lf = load(DATA / name, environ=ENV)
        again = load(write(tmp_path, lf.to_yaml(), f"resolved-{name}"), environ=ENV)
        assert again.model_dump(exclude={"source"}) == lf.model_dump(exclude={"source"})
    path = write(tmp_path, """
        nodes:
          - id: sh
            cmd: ["sh", "-c", "echo $${HOME} ${WHO}"]
    """)
    lf = load(path, environ={"WHO": "me"})
    assert lf.node("sh").cmd == ["sh", "-c", "echo ${HOME} me"]
    again = load(write(tmp_path, lf.to_yaml(), "again.yaml"), environ={})
    assert again.node("sh").cmd == lf.node("sh").cmd


def test_name_defaults_to_file_stem(tmp_path: Path) -> None:
    path = write(tmp_path, "nodes: [{id: a, uses: hello.env}]\n", "stemmy.yaml")
    lf = load(path, environ=ENV)
    assert lf.name == "stemmy" and lf.run.episodes is None and lf.bus.transport == "ipc"


def test_episodes_argument_overrides_run(tmp_path: Path) -> None:
    assert load(DATA / "pipeline.yaml", episodes=9, environ=ENV).run.episodes == 9


# --------------------------------------------------------------------------
# variables


def test_variables_substitute_with_defaults_and_types(tmp_path: Path) -> None:
    path = write(tmp_path, """
        nodes:
          - id: env
            uses: hello.env
            params:
              greeting: "hi ${WHO}, from ${PLACE:-home} and ${WHO}"
              count: ${COUNT:-5}
              quoted: "${COUNT:-5}"
              ratio: ${RATIO}
        run:
          episodes: ${N:-4}
    """)
    lf = load(path, environ={"WHO": "ada", "RATIO": "0.5"})
    params = lf.node("env").params
    assert params["greeting"] == "hi ada, from home and ada"
    assert params["count"] == 5
    assert params["quoted"] == "5"  # quoting keeps it a string
    assert params["ratio"] == 0.5
    assert lf.run.episodes == 4
    assert load(path, environ={"WHO": "x", "RATIO": "1", "N": "12"}).run.episodes == 12


def test_unset_variable_points_at_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, """
        nodes:
          - id: env
            uses: hello.env
            params:
              model: ${MODEL_NAME}
    """)
    err = fails(path)
    assert err.line == 5 and err.column == 14
    assert "MODEL_NAME" in err.message
    assert str(err).startswith(f"{path}:5:14: nodes[0].params.model: ")


def test_variable_suggests_similar_name(tmp_path: Path) -> None:
    path = write(tmp_path, "run: {seed: '${SEDE}'}\nnodes: [{id: a, uses: hello.env}]\n")
    err = fails(path, environ={"SEED": "3"})
    assert err.line == 1 and err.suggestion == "SEED"


def test_malformed_variable_reference(tmp_path: Path) -> None:
    path = write(tmp_path, "nodes:\n  - id: a\n    cmd: 'echo ${not ok}'\n")
    err = fails(path)
    assert err.line == 3 and "malformed" in err.message


# --------------------------------------------------------------------------
# includes


def test_include_merges_and_overrides() -> None:
    lf = load(DATA / "override.yaml", environ=ENV)
    assert [n.id for n in lf.nodes] == ["env", "agent", "judge"]
    agent = lf.node("agent")
    assert agent.uses == "json:JSONDecoder"  # one line swaps the model
    # the include's set: applied first, then the including file deep-merged over it
    assert agent.params == {"temperature": 0.2, "model": "large"}
    assert agent.inputs["obs"].sources == ["env/obs"]
    assert lf.node("env").params == {"start": 5, "board": {"width": 16, "height": 8}}
    assert lf.bus.heartbeat == 0.1 and lf.bus.transport == "ipc"
    assert lf.run.episodes == 3 and lf.run.seed == 42
    assert lf.name == "override" and lf.description == ""


def test_include_override_cmd_replaces_uses(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text(
        "nodes:\n  - id: a\n    uses: hello.env\n    inputs: {x: a/y}\n")
    path = write(tmp_path, """
        include: [base.yaml]
        nodes:
          - id: a
            cmd: ./robot --fast
            inputs: {x: {policy: latest}}
    """)
    node = load(path, environ=ENV).node("a")
    assert node.uses is None and node.cmd == ["./robot", "--fast"]
    assert node.inputs["x"].sources == ["a/y"] and node.inputs["x"].policy == "latest"


def test_include_cycle_names_the_chain() -> None:
    err = fails(DATA / "cycle_a.yaml")
    assert "cycle" in err.message
    assert "cycle_a.yaml -> cycle_b.yaml -> cycle_a.yaml" in err.message
    assert err.file is not None and err.file.name == "cycle_b.yaml" and err.line == 2


def test_include_missing_file(tmp_path: Path) -> None:
    (tmp_path / "common.yaml").write_text("nodes: [{id: a, uses: hello.env}]\n")
    path = write(tmp_path, """
        name: x
        include:
          - file: comon.yaml
    """)
    err = fails(path)
    assert err.line == 3 and err.column == 11 and err.suggestion == "common.yaml"


def test_error_inside_included_file_points_there(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text(
        "nodes:\n  - id: a\n    uses: hello.env\n    restart: sometimes\n")
    path = write(tmp_path, "include: [base.yaml]\n")
    err = fails(path)
    assert err.file == tmp_path / "base.yaml" and err.line == 4
    assert err.allowed == ["never", "on-failure"]


def test_include_set_unknown_node_points_at_set_key(tmp_path: Path) -> None:
    path = write(tmp_path, f"""
        include:
          - file: {DATA / 'common.yaml'}
            set: {{agnet.temperature: 0.1}}
    """)
    err = fails(path)
    assert err.line == 3 and err.suggestion == "agent"


def test_include_set_as_list_of_strings(tmp_path: Path) -> None:
    path = write(tmp_path, f"""
        include:
          - file: {DATA / 'common.yaml'}
            set: ["agent.temperature=0.9", "env.board.width=3", "run.seed=5"]
    """)
    lf = load(path, environ=ENV)
    assert lf.node("agent").params["temperature"] == 0.9
    assert lf.node("env").params["board"] == {"width": 3, "height": 8}
    assert lf.run.seed == 5


def test_include_bare_bundled_name(tmp_path: Path) -> None:
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    (shelf / "shared.yaml").write_text("nodes: [{id: a, uses: hello.env}]\n")
    work = tmp_path / "work"
    work.mkdir()
    path = write(work, "include: [shared]\nnodes: [{id: b, uses: hello.agent}]\n")
    lf = load(path, environ={"FRAMEBUS_LAUNCH_PATH": str(shelf)})
    assert [n.id for n in lf.nodes] == ["a", "b"]


# --------------------------------------------------------------------------
# replicas


def test_replicas_expand_and_rewire() -> None:
    lf = load(DATA / "replicas.yaml", environ=ENV)
    assert [n.id for n in lf.nodes] == [
        "model", "env2-0", "agent2-0", "env2-1", "agent2-1", "env2-2", "agent2-2", "judge"]
    for i in range(3):
        env, agent = lf.node(f"env2-{i}"), lf.node(f"agent2-{i}")
        assert (env.group, env.replica) == ("worker", i)
        assert env.params == {"start": 9, "replica": i}
        assert agent.inputs["obs"].sources == [f"env2-{i}/obs"]  # same group: own copy
        assert agent.inputs["score"].sources == ["model/out"]  # outside the group: kept
        assert agent.clock is not None and agent.clock.wait_for == [f"env2-{i}", "model"]
    # outside the group: fan in from every copy
    assert lf.node("judge").inputs["obs"].sources == ["env2-0/obs", "env2-1/obs", "env2-2/obs"]


def test_replica_param_given_is_kept(tmp_path: Path) -> None:
    path = write(tmp_path, """
        nodes:
          - group: g
            replicas: 2
            nodes:
              - id: w
                uses: hello.env
                params: {replica: fixed}
    """)
    lf = load(path, environ=ENV)
    assert [n.params["replica"] for n in lf.nodes] == ["fixed", "fixed"]


def test_bad_replica_count(tmp_path: Path) -> None:
    path = write(tmp_path, """
        nodes:
          - group: g
            replicas: 0
            nodes: [{id: w, uses: hello.env}]
    """)
    err = fails(path)
    assert err.line == 3 and err.column == 15


def test_copy_name_clash_is_duplicate(tmp_path: Path) -> None:
    path = write(tmp_path, """
        nodes:
          - id: w-1
            uses: hello.env
          - group: g
            replicas: 2
            nodes: [{id: w, uses: hello.env}]
    """)
    err = fails(path)
    assert "duplicate node id 'w-1'" in err.message and err.line == 6


# --------------------------------------------------------------------------
# --set


def test_set_params_run_and_bus() -> None:
    lf = load(DATA / "pipeline.yaml", environ=ENV, sets=[
        "agent.temperature=0.25", "agent.sampler.top_k=5", "env.start=[1, 2]",
        "run.episodes=11", "bus.transport=ipc", "judge.name=' spaced '",
    ])
    assert lf.node("agent").params == {"temperature": 0.25, "sampler": {"top_k": 5}}
    assert lf.node("env").params["start"] == [1, 2]
    assert lf.node("judge").params["name"] == " spaced "
    assert lf.run.episodes == 11 and lf.bus.transport == "ipc"


def test_set_on_group_node_applies_to_all_copies() -> None:
    lf = load(DATA / "replicas.yaml", environ=ENV, sets=["env2.start=1", "env2-2.start=2"])
    assert [lf.node(f"env2-{i}").params["start"] for i in range(3)] == [1, 1, 2]


def test_set_unknown_node_suggests() -> None:
    err = fails(DATA / "pipeline.yaml", sets=["agnet.temperature=0.1"])
    assert err.line is None and err.file is None
    assert err.suggestion == "agent" and "agnet.temperature" in str(err)
    assert "did you mean 'agent'?" in str(err)


def test_set_bad_value_type_is_reported_against_the_set() -> None:
    err = fails(DATA / "pipeline.yaml", sets=["run.episodes=many"])
    assert err.line is None and "run.episodes" in err.key and "integer" in err.message


def test_set_needs_key_and_value() -> None:
    err = fails(DATA / "pipeline.yaml", sets=["justakey"])
    assert "KEY=VALUE" in err.message


def test_set_episodes_after_set() -> None:
    lf = load(DATA / "pipeline.yaml", environ=ENV, sets=["run.episodes=2"], episodes=5)
    assert lf.run.episodes == 5


# --------------------------------------------------------------------------
# validation errors, each with its exact position


def test_typo_key_points_at_line_with_suggestion() -> None:
    err = fails(DATA / "typo_key.yaml")
    text = str(err)
    assert text.startswith(f"{DATA / 'typo_key.yaml'}:7:5: nodes[1].inptus: unknown key 'inptus'")
    assert "did you mean 'inputs'" in text
    assert err.allowed is not None and "inputs" in err.allowed and "source" not in err.allowed


def test_bad_enum_value_matches_documented_format(tmp_path: Path) -> None:
    path = write(tmp_path, """
        nodes:
          - id: env
            uses: hello.env
          - id: agent
            uses: hello.agent
            inputs:
              obs: {from: env/obs, policy: lates}
    """, "hello.yaml")
    err = fails(path)
    assert str(err) == (f"{path}:7:36: nodes[1].inputs.obs.policy: unknown value 'lates'; "
                        "allowed: latest, fifo, block (did you mean 'latest'?)")


@pytest.mark.parametrize(
    ("body", "line", "needle"),
    [
        # unknown keys at several levels
        ("bus: {transprot: tcp}\nnodes: [{id: a, uses: hello.env}]\n", 1, "did you mean 'transport'"),
        ("nodes: [{id: a, uses: hello.env}]\nrun:\n  episods: 3\n", 3, "did you mean 'episodes'"),
        ("nodez: []\n", 1, "did you mean 'nodes'"),
        ("nodes:\n  - id: a\n    uses: hello.env\n    inputs: {x: {form: a/y}}\n", 4, "did you mean 'from'"),
        ("nodes:\n  - id: a\n    uses: hello.env\n    clock: {mode: lockstep, dedline: 1}\n", 4,
         "did you mean 'deadline'"),
        ("nodes:\n  - group: g\n    replica: 2\n    nodes: [{id: a, uses: hello.env}]\n", 3,
         "did you mean 'replicas'"),
        # enums
        ("bus: {transport: udp}\nnodes: [{id: a, uses: hello.env}]\n", 1, "allowed: ipc, tcp"),
        ("nodes:\n  - id: a\n    uses: hello.env\n    restart: {policy: on-failur}\n", 4,
         "did you mean 'on-failure'"),
        ("nodes:\n  - id: a\n    uses: hello.env\n    clock: {mode: realtim, fps: 3}\n", 4,
         "did you mean 'realtime'"),
        # wrong types
        ("nodes:\n  - id: a\n    uses: hello.env\nrun:\n  seed: abc\n", 5, "expected an integer"),
        ("nodes:\n  - id: a\n    uses: hello.env\n    params: [1, 2]\n", 4, "expected a mapping"),
        ("nodes:\n  - id: a\n    uses: hello.env\nbus:\n  heartbeat: fast\n", 5, "expected a number"),
        ("nodes:\n  - id: a\n    uses: [hello.env]\n", 3, "expected a string"),
        ("nodes:\n  - id: a\n    uses: hello.env\n    inputs:\n      x: {from: a/y, size: 0}\n", 5,
         "greater than or equal to 1"),
        ("nodes:\n  - id: a\n    uses: hello.env\n    clock: {mode: realtime}\n", 4, "fps"),
        # structure
        ("nodes: {id: a}\n", 1, "expected a list of nodes"),
        ("nodes:\n  - id: 3bad\n    uses: hello.env\n", 2, "invalid node id"),
        ("nodes:\n  - uses: hello.env\n", 2, "needs an 'id'"),
        ("nodes: []\n", 1, "needs at least 1 node"),
        ("name: empty\n", 1, "missing required key 'nodes'"),
    ],
)
def test_validation_errors_have_positions(tmp_path: Path, body: str, line: int, needle: str) -> None:
    err = fails(write(tmp_path, body))
    assert err.line == line, str(err)
    assert needle in str(err)
    assert str(err).startswith(f"{tmp_path / 'file.yaml'}:{line}:")


def test_duplicate_id_points_at_second(tmp_path: Path) -> None:
    path = write(tmp_path, """
        nodes:
          - id: env
            uses: hello.env
          - id: agent
            uses: hello.agent
          - id: env
            uses: hello.env
    """)
    err = fails(path)
    assert err.line == 6 and err.column == 9 and "duplicate node id 'env'" in err.message
    assert "line 2" in err.message


def test_uses_and_cmd_both(tmp_path: Path) -> None:
    path = write(tmp_path, "nodes:\n  - id: a\n    uses: hello.env\n    cmd: [ls]\n")
    err = fails(path)
    assert err.line == 4 and "both" in err.message


def test_uses_and_cmd_neither(tmp_path: Path) -> None:
    path = write(tmp_path, "nodes:\n  - id: a\n  - id: b\n    params: {x: 1}\n")
    err = fails(path)
    assert err.line == 2 and "either 'uses'" in err.message


@pytest.mark.parametrize("source", ["env", "env/", "/obs", "env/obs/x"])
def test_malformed_source(tmp_path: Path, source: str) -> None:
    path = write(tmp_path, f"""
        nodes:
          - id: env
            uses: hello.env
            inputs:
              x: {{from: ["env/obs", "{source}"]}}
    """)
    err = fails(path)
    assert err.line == 5 and err.column == 29 and "node/output" in err.message


def test_source_unknown_node_suggests(tmp_path: Path) -> None:
    path = write(tmp_path, """
        nodes:
          - id: env
            uses: hello.env
          - id: agent
            uses: hello.agent
            inputs:
              obs: evn/obs
    """)
    err = fails(path)
    assert err.line == 7 and err.column == 12 and err.suggestion == "env"


def test_wait_for_unknown_node(tmp_path: Path) -> None:
    path = write(tmp_path, """
        nodes:
          - id: env
            uses: hello.env
            clock:
              mode: lockstep
              wait_for: [agent, agnt]
          - id: agent
            uses: hello.agent
    """)
    err = fails(path)
    assert err.line == 6 and err.column == 25 and err.suggestion == "agent"


def test_non_mapping_top_level(tmp_path: Path) -> None:
    err = fails(write(tmp_path, "- id: a\n- id: b\n"))
    assert err.line == 1 and "top level" in err.message


def test_empty_file(tmp_path: Path) -> None:
    err = fails(write(tmp_path, "# nothing\n"))
    assert "empty" in err.message


def test_yaml_syntax_error_uses_mark(tmp_path: Path) -> None:
    path = write(tmp_path, "nodes:\n  - id: a\n    params: {x: [1, 2}\n")
    err = fails(path)
    assert err.line == 3 and "YAML syntax error" in err.message


def test_yaml_duplicate_key(tmp_path: Path) -> None:
    path = write(tmp_path, "nodes:\n  - id: a\n    uses: hello.env\n    uses: hello.agent\n")
    err = fails(path)
    assert err.line == 4 and "duplicate key 'uses'" in err.message


def test_missing_file(tmp_path: Path) -> None:
    err = fails(tmp_path / "nope" / "missing.yaml")
    assert "not found" in err.message


# --------------------------------------------------------------------------
# uses


def test_uses_module_class_checked_without_import(tmp_path: Path) -> None:
    path = write(tmp_path, "nodes:\n  - id: a\n    uses: 'json.decoder:JSONDecoder'\n")
    assert load(path, environ=ENV).node("a").uses == "json.decoder:JSONDecoder"
    path = write(tmp_path, "nodes:\n  - id: a\n    uses: 'no_such_module_xyz.sub:Thing'\n")
    err = fails(path)
    assert err.line == 3 and err.column == 11 and "no_such_module_xyz.sub" in err.message


def test_uses_submodule_of_unimported_package_not_imported(tmp_path: Path) -> None:
    import sys

    path = write(tmp_path, "nodes:\n  - id: a\n    uses: 'wsgiref.simple_server:WSGIServer'\n")
    for name in ("wsgiref.simple_server", "wsgiref"):
        sys.modules.pop(name, None)
    load(path, environ=ENV)
    assert "wsgiref" not in sys.modules and "wsgiref.simple_server" not in sys.modules


def test_uses_unknown_registered_name(tmp_path: Path) -> None:
    path = write(tmp_path, "nodes:\n  - id: a\n    uses: hello.agnet\n")
    err = fails(path)
    assert err.line == 3 and err.suggestion == "hello.agent"
    assert err.allowed is not None and {"hello.env", "hello.agent", "hello.judge"} <= set(err.allowed)


# --------------------------------------------------------------------------
# finding files


def test_resolve_path_prefers_existing_path(tmp_path: Path) -> None:
    local = write(tmp_path, "nodes: [{id: a, uses: hello.env}]\n", "mine.yaml")
    assert resolve_path("mine.yaml", cwd=tmp_path) == local
    assert resolve_path(local) == local


def test_resolve_path_via_launch_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    (shelf / "demo.yaml").write_text("description: a demo\nnodes: [{id: a, uses: hello.env}]\n")
    monkeypatch.setenv("FRAMEBUS_LAUNCH_PATH", str(shelf))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert resolve_path("demo", cwd=elsewhere) == shelf / "demo.yaml"
    assert resolve_path("demo.yaml", cwd=elsewhere) == shelf / "demo.yaml"
    assert load("demo", environ={"FRAMEBUS_LAUNCH_PATH": str(shelf)}).name == "demo"
    with pytest.raises(LaunchError) as info:
        resolve_path("dmeo", cwd=elsewhere)
    assert info.value.suggestion == "demo"
    assert info.value.allowed is not None and "demo" in info.value.allowed


def test_bundled_dir_is_repo_launch_folder() -> None:
    assert launchfile.bundled_dir() == Path(__file__).resolve().parents[1] / "launch"


# --------------------------------------------------------------------------
# graph views


def test_render_text() -> None:
    text = render_text(load(DATA / "pipeline.yaml", environ=ENV))
    assert "env  uses hello.env" in text
    assert "obs <- env/obs [latest 1]" in text
    assert "obs <- env/obs, agent/action [fifo 32]" in text
    assert "clock: lockstep deadline=2s wait_for=agent" in text
    assert "cmd python -c print('frame')" in text


def test_render_mermaid() -> None:
    lf = load(DATA / "replicas.yaml", environ=ENV)
    chart = render_mermaid(lf)
    assert chart.startswith("flowchart LR\n")
    assert 'n_env2_0 -->|"obs→obs"| n_agent2_0' in chart
    assert 'n_model -->|"out→score"| n_agent2_1' in chart
    assert 'n_env2_2 -->|"obs→obs"| n_judge' in chart
    assert 'subgraph g_0["worker"]' in chart
    inside = chart.split('subgraph g_0["worker"]')[1].split("end")[0]
    assert "n_env2_1[" in inside and "n_judge[" not in inside
    assert chart.count("-->") == len(lf.edges())


def test_launchfile_node_unknown() -> None:
    lf = load(DATA / "pipeline.yaml", environ=ENV)
    with pytest.raises(LaunchError) as info:
        lf.node("agnet")
    assert info.value.suggestion == "agent"
    assert isinstance(lf, LaunchFile)
