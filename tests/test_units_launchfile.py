"""The launch-file stages on their own (milliseconds each): variables, includes, overrides,
replicas and the typed-params check, with the positions and suggestions their errors carry;
plus ``launch describe`` through the real CLI."""

from __future__ import annotations

import shutil
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Literal

import pytest
import zmq
from pydantic import Field

from kernel.bus.ipcpath import IPC_DIR_LENGTH, MAX_NODE_ID, inbox_path, make_ipc_dir
from kernel.launchfile import LaunchError, load
from kernel.launchfile.includes import MAX_READS, Context, read
from kernel.launchfile.limits import MAX_EPISODES, MAX_NODES, MAX_PARAMS_BYTES, MAX_REPLICAS, MAX_VALUES, params_json
from kernel.launchfile.overrides import apply_sets
from kernel.launchfile.replicas import expand_replicas
from kernel.launchfile.tree import Y, compose, plain
from kernel.launchfile.variables import substitute
from kernel.sdk.node import Node, NodeParams
from kernel.sdk.registry import load_node_class
from kernel.tools import cli
from kernel.tools.imports import bounded
from tests.helpers import launch


def tree(text: str, name: str = "t.yaml") -> Y:
    return compose(textwrap.dedent(text), Path(name))


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path


# --- variables ---------------------------------------------------------------------------------

def test_a_whole_plain_variable_becomes_a_number_and_a_quoted_one_stays_text():
    y = tree("a: ${N:-5}\nb: '${N:-5}'\nc: x-${NAME}\n")
    substitute(y, {"NAME": "bob"})
    assert plain(y) == {"a": 5, "b": "5", "c": "x-bob"}


def test_an_empty_variable_takes_its_default_as_in_the_shell():
    y = tree("a: ${N:-5}\nb: x${E}y\n")
    substitute(y, {"N": "", "E": ""})
    assert plain(y) == {"a": 5, "b": "xy"}


def test_an_unset_variable_is_reported_at_its_line_with_the_closest_name():
    y = tree("run:\n  seed: ${SEDE}\n")
    with pytest.raises(LaunchError) as err:
        substitute(y, {"SEED": "1"})
    assert (err.value.line, err.value.column, err.value.key) == (2, 9, "run.seed")
    assert err.value.suggestion == "SEED"


# --- includes ----------------------------------------------------------------------------------

def test_an_include_is_merged_under_the_including_file(tmp_path):
    write(tmp_path / "base.yaml", """
        nodes:
          - {id: env, uses: hello.env, params: {max_steps: 5}}
        run: {episodes: 2, seed: 1}
    """)
    top = write(tmp_path / "top.yaml", """
        include: [base.yaml]
        nodes:
          - {id: env, params: {max_steps: 9}}
        run: {episodes: 3}
    """)
    root = read(top, Context({}, [top.resolve()]), None)
    doc = plain(root)
    assert doc["nodes"] == [{"id": "env", "uses": "hello.env", "params": {"max_steps": 9}}]
    assert doc["run"] == {"episodes": 3, "seed": 1}


def test_an_include_merges_a_group_by_name_and_a_node_by_id_also_inside_a_group(tmp_path):
    write(tmp_path / "base.yaml", """
        nodes:
          - group: g
            replicas: 2
            nodes:
              - {id: env, uses: hello.env, params: {max_steps: 5}}
              - {id: agent, uses: hello.agent}
    """)
    top = write(tmp_path / "top.yaml", """
        include: [base.yaml]
        nodes:
          - group: g
            replicas: 3
            nodes:
              - {id: agent, cmd: [python, a.py]}
              - {id: extra, uses: hello.agent}
          - {id: env, params: {length: 4}}
    """)
    group = plain(read(top, Context({}, [top.resolve()]), None))["nodes"]
    assert group == [{"group": "g", "replicas": 3, "nodes": [
        {"id": "env", "uses": "hello.env", "params": {"max_steps": 5, "length": 4}},
        {"id": "agent", "cmd": ["python", "a.py"]},  # cmd replaces the included uses
        {"id": "extra", "uses": "hello.agent"}]}]


def test_an_include_cycle_names_the_chain(tmp_path):
    write(tmp_path / "a.yaml", "include: [b.yaml]\nnodes: []\n")
    write(tmp_path / "b.yaml", "include: [a.yaml]\nnodes: []\n")
    with pytest.raises(LaunchError, match="include cycle: a.yaml -> b.yaml -> a.yaml"):
        read(tmp_path / "a.yaml", Context({}, [(tmp_path / "a.yaml").resolve()]), None)


# --- overrides ---------------------------------------------------------------------------------

def test_set_reaches_a_param_and_run_and_says_where_it_came_from():
    y = tree("nodes:\n  - {id: env, uses: hello.env}\n")
    apply_sets(y, ["env.max_steps=7", "run.episodes=2"])
    assert plain(y)["nodes"][0]["params"] == {"max_steps": 7} and plain(y)["run"] == {"episodes": 2}
    with pytest.raises(LaunchError) as err:
        apply_sets(y, ["evn.max_steps=1"])
    assert err.value.key == "--set evn.max_steps" and err.value.suggestion == "env"


# --- replicas ----------------------------------------------------------------------------------

def test_a_replica_group_becomes_numbered_copies_wired_to_their_own_partner():
    y = tree("""
        nodes:
          - group: pair
            replicas: 2
            nodes:
              - {id: env, uses: hello.env, inputs: {action: agent/action}}
              - {id: agent, uses: hello.agent, inputs: {obs: env/obs}}
    """)
    from kernel.launchfile.entries import normalise_entries

    normalise_entries(y.value["nodes"])
    expand_replicas(y)
    nodes = {n["id"]: n for n in plain(y)["nodes"]}
    assert sorted(nodes) == ["agent-0", "agent-1", "env-0", "env-1"]
    assert nodes["env-1"]["inputs"]["action"]["sources"] == ["agent-1/action"]
    assert nodes["agent-0"]["params"] == {"replica": 0} and nodes["agent-0"]["group"] == "pair"


# --- typed params ------------------------------------------------------------------------------

class TierParams(NodeParams):
    tier: Literal["easy", "medium", "hard"] = Field("easy", description="how hard")
    size: int = Field(4, ge=1, le=9, description="board size")
    extra: dict[str, Any] = Field(default_factory=dict, description="anything")
    tiers: Literal["easy", "hard"] | list[Literal["easy", "hard"]] | None = Field(None, description="one or several")


class TierNode(Node):
    Params = TierParams


def classes(uses: str) -> type[Node]:
    if uses == "json:Nope":
        raise AttributeError("module 'json' has no attribute 'Nope'")
    return TierNode


def typed(tmp_path: Path, params: str, *sets: str) -> LaunchError:
    path = write(tmp_path / "g.yaml", f"""
        nodes:
          - id: env
            uses: hello.env
            params: {params}
    """)
    with pytest.raises(LaunchError) as err:
        load(path, sets=sets, node_class=classes)
    return err.value


def test_a_literal_param_lists_the_allowed_values_at_its_position(tmp_path):
    err = typed(tmp_path, "{tier: hrad}")
    assert str(err) == (f"{tmp_path / 'g.yaml'}:5:20: nodes.env.params.tier: unknown value 'hrad'; "
                        "allowed: easy, medium, hard (did you mean 'hard'?)")


def test_a_misspelt_param_key_gets_did_you_mean(tmp_path):
    err = typed(tmp_path, "{tire: hard}")
    assert (err.line, err.column, err.key) == (5, 14, "nodes.env.params.tire")
    assert err.suggestion == "tier" and err.allowed == ["tier", "size", "extra", "tiers"]


def test_a_range_is_reported_with_its_bounds(tmp_path):
    err = typed(tmp_path, "{size: 12}")
    assert err.key == "nodes.env.params.size" and err.allowed == [">= 1 and <= 9"] and "got 12" in err.message


def test_a_bad_set_names_the_key_the_file_and_the_set(tmp_path):
    err = typed(tmp_path, "{}", "env.tier=99")
    assert err.file == tmp_path / "g.yaml" and err.key == "nodes.env.params.tier"
    assert "(from --set env.tier)" in err.message and err.allowed == ["easy", "medium", "hard"]


def test_good_params_are_parsed_once_and_kept(tmp_path):
    path = write(tmp_path / "g.yaml", "nodes:\n  - {id: env, uses: hello.env, params: {tier: hard}}\n")
    lf = load(path, node_class=classes)
    assert lf.parsed_params["env"] == TierParams(tier="hard")
    assert load(path).parsed_params == {}  # without the classes, nothing is imported or parsed


def test_a_class_that_does_not_load_is_reported_at_uses(tmp_path):
    path = write(tmp_path / "g.yaml", "nodes:\n  - id: env\n    uses: json:Nope\n")
    with pytest.raises(LaunchError) as err:
        load(path, node_class=classes)
    assert (err.value.line, err.value.key) == (3, "nodes[0].uses")
    assert "cannot load json:Nope: AttributeError: module 'json' has no attribute 'Nope'" in err.value.message


# --- launch describe ---------------------------------------------------------------------------

def test_describe_prints_ports_services_and_typed_params():
    res = launch("describe", "model.chat")
    assert res.returncode == 0, res.stderr
    assert "services: chat" in res.stdout
    assert "image_format" in res.stdout and "one of 'png' | 'jpeg'" in res.stdout and "default 'png'" in res.stdout
    assert "max_concurrency" in res.stdout and ">= 1" in res.stdout and "requests in flight" in res.stdout


def test_describe_an_unknown_node_suggests_the_closest_name():
    res = launch("describe", "agent.lm")
    assert res.returncode == 2
    assert "unknown node type 'agent.lm'" in res.stderr and "did you mean 'agent.llm'?" in res.stderr


def test_a_union_field_names_the_key_not_pydantics_member_tags(tmp_path):
    err = typed(tmp_path, "{}", "env.tiers=99")
    assert err.key == "nodes.env.params.tiers" and err.allowed == ["easy", "hard"], str(err)


def test_a_bad_item_of_a_union_list_is_reported_at_the_item(tmp_path):
    err = typed(tmp_path, "{tiers: [easy, hrad]}")
    assert err.key == "nodes.env.params.tiers[1]" and err.allowed == ["easy", "hard"] and err.suggestion == "hard"


def test_a_rate_is_only_for_a_latest_input_and_is_said_at_its_line(tmp_path):
    good = write(tmp_path / "good.yaml", """\
        name: watch
        nodes:
          - id: env
            cmd: "true"
          - id: watcher
            cmd: "true"
            inputs:
              obs: {from: env/obs, policy: latest, rate: 10}
        """)
    assert load(good).node("watcher").inputs["obs"].rate == 10
    bad = write(tmp_path / "bad.yaml", (tmp_path / "good.yaml").read_text().replace("latest", "fifo"))
    with pytest.raises(LaunchError) as err:
        load(bad)
    text = str(err.value)
    assert "bad.yaml:8" in text and "rate" in text and "'latest'" in text, text


# --- resource limits (docs/launch.md, "Limits") ------------------------------------------------

def laughs(levels: int = 9, width: int = 9) -> str:
    """A "billion laughs": each anchor a list of ``width`` aliases of the one before (width**levels values)."""
    lines = ["x-laughs:", f"  - &l0 [{', '.join(['lol'] * width)}]"]
    lines += [f"  - &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_a_billion_laughs_is_refused_at_its_line_before_it_expands(tmp_path):
    path = write(tmp_path / "bomb.yaml", laughs() + f"nodes:\n  - {{id: env, cmd: 'true', params: {{x: *l{8}}}}}\n")
    started = time.monotonic()
    with pytest.raises(LaunchError) as err:
        load(path)
    assert time.monotonic() - started < 5  # the old loader expanded 9**9 values: minutes and gigabytes
    assert (err.value.file, err.value.line) == (path, 7), str(err.value)  # &l5: the first past the limit
    assert f"{MAX_VALUES:,} values" in err.value.message and "aliases" in err.value.message


def test_an_alias_inside_its_own_anchor_is_refused_at_its_line(tmp_path):
    path = write(tmp_path / "loop.yaml", "nodes:\n  - id: env\n    cmd: 'true'\n    params: &p {self: *p}\n")
    with pytest.raises(LaunchError) as err:
        load(path)
    assert err.value.line == 4 and "recursive alias" in err.value.message, str(err.value)


def test_aliases_in_a_set_value_are_bounded_too_and_name_the_set(tmp_path):
    path = write(tmp_path / "g.yaml", "nodes:\n  - {id: env, cmd: 'true'}\n")
    bomb = "[" + laughs(7).split("\n", 1)[1].replace("\n  - ", ", ").strip().lstrip("- ") + "]"
    with pytest.raises(LaunchError) as err:
        load(path, sets=[f"env.x={bomb}"])
    assert err.value.key == "--set env.x" and f"{MAX_VALUES:,} values" in err.value.message, str(err.value)


def test_a_file_included_over_and_over_is_refused_at_the_include(tmp_path):
    write(tmp_path / "leaf.yaml", "nodes:\n  - {id: env, cmd: 'true'}\n")
    for name, under in (("mid", "leaf"), ("top", "mid")):  # 10 x 10 x 10 reads of three small files
        write(tmp_path / f"{name}.yaml", f"include: [{', '.join([f'{under}.yaml'] * 10)}]\n")
    main = write(tmp_path / "main.yaml", f"include: [{', '.join(['top.yaml'] * 10)}]\n")
    with pytest.raises(LaunchError) as err:
        load(main)
    assert err.value.line == 1 and f"at most {MAX_READS} files" in err.value.message, str(err.value)


def test_replicas_past_the_limit_are_refused_at_their_line(tmp_path):
    path = write(tmp_path / "g.yaml", """
        nodes:
          - group: g
            replicas: 100000000
            nodes: [{id: env, cmd: 'true'}]
    """)
    with pytest.raises(LaunchError) as err:
        load(path)
    assert (err.value.line, err.value.column) == (4, 15) and err.value.message == (
        f"expected a whole number from 1 to {MAX_REPLICAS}, got 100000000")


def test_a_graph_past_the_node_limit_is_refused_at_the_group_that_passes_it(tmp_path):
    path = write(tmp_path / "g.yaml", """
        nodes:
          - group: a
            replicas: 1000
            nodes: [{id: env, cmd: 'true'}, {id: agent, cmd: 'true'}]
          - group: b
            replicas: 1000
            nodes: [{id: env2, cmd: 'true'}, {id: agent2, cmd: 'true'}, {id: judge2, cmd: 'true'}]
    """)
    with pytest.raises(LaunchError) as err:
        load(path)
    assert err.value.line == 7 and f"at most {MAX_NODES:,} nodes" in err.value.message, str(err.value)


def test_episodes_past_the_limit_are_refused_from_the_file_from_set_and_from_the_flag(tmp_path):
    path = write(tmp_path / "g.yaml", "nodes:\n  - {id: env, cmd: 'true'}\nrun:\n  episodes: 9223372036854775807\n")
    with pytest.raises(LaunchError) as err:
        load(path)
    assert (err.value.line, err.value.key) == (4, "run.episodes")
    assert err.value.allowed == [f">= 1 and <= {MAX_EPISODES}"]
    path.write_text("nodes:\n  - {id: env, cmd: 'true'}\n")
    with pytest.raises(LaunchError) as err:
        load(path, sets=["run.episodes=20000000"])
    assert "(from --set run.episodes)" in err.value.message and err.value.allowed == [f">= 1 and <= {MAX_EPISODES}"]
    with pytest.raises(LaunchError) as err:
        load(path, episodes=2**63 - 1)
    assert err.value.key == "--episodes" and err.value.allowed == [f">= 1 and <= {MAX_EPISODES}"]
    assert load(path, episodes=MAX_EPISODES).run.episodes == MAX_EPISODES


def test_a_node_id_longer_than_an_ipc_path_holds_is_refused_at_its_line(tmp_path):
    path = write(tmp_path / "g.yaml", f"nodes:\n  - id: {'n' * 150}\n    cmd: 'true'\n")
    with pytest.raises(LaunchError) as err:
        load(path)
    assert (err.value.line, err.value.column) == (2, 9) and f"at most {MAX_NODE_ID}" in err.value.message
    ok = "n" * MAX_NODE_ID
    path.write_text(f"nodes:\n  - id: {ok}\n    cmd: 'true'\n")
    assert load(path).nodes[0].id == ok
    # a replica's copy is named <id>-<i>: the suffix counts
    path.write_text(f"nodes:\n  - group: g\n    replicas: 12\n    nodes:\n      - id: {'n' * (MAX_NODE_ID - 2)}\n"
                    "        cmd: 'true'\n")
    with pytest.raises(LaunchError) as err:
        load(path)
    assert err.value.line == 5 and "replica suffix '-10'" in err.value.message, str(err.value)


def test_the_longest_id_allowed_binds_a_real_inbox_socket_and_one_more_character_does_not():
    """The limit is derived from the path the bus binds: check it against ZeroMQ on a real run folder."""
    directory = make_ipc_dir()
    ctx = zmq.Context()
    sock = ctx.socket(zmq.ROUTER)
    try:
        assert len(str(directory)) == IPC_DIR_LENGTH
        sock.bind(f"ipc://{inbox_path(directory, 'n' * MAX_NODE_ID, 4194304)}")  # pid_max's widest pid
        with pytest.raises(zmq.ZMQError):
            sock.bind(f"ipc://{inbox_path(directory, 'n' * (MAX_NODE_ID + 1), 4194304)}")
    finally:
        sock.close(linger=0)
        ctx.term()
        shutil.rmtree(directory)


def test_params_larger_than_an_environment_string_are_refused_at_params(tmp_path):
    path = write(tmp_path / "g.yaml", f"nodes:\n  - id: env\n    cmd: 'true'\n    params:\n"
                                      f"      blob: {'x' * 140_000}\n")
    with pytest.raises(LaunchError) as err:
        load(path)
    assert (err.value.line, err.value.key) == (5, "nodes[0].params"), str(err.value)
    assert f"at most {MAX_PARAMS_BYTES:,} bytes" in err.value.message and "140,012 bytes" in err.value.message
    path.write_text("nodes:\n  - {id: env, cmd: 'true'}\n")
    with pytest.raises(LaunchError) as err:  # from --set: the file it was applied to is named
        load(path, sets=[f"env.blob={'x' * 140_000}"])
    assert err.value.file == path and "its params take" in err.value.message
    assert len(params_json({"blob": "x" * (MAX_PARAMS_BYTES - 12)}).encode()) == MAX_PARAMS_BYTES
    path.write_text(f"nodes:\n  - id: env\n    cmd: 'true'\n    params:\n      blob: {'x' * (MAX_PARAMS_BYTES - 12)}\n")
    assert load(path).nodes[0].params["blob"]  # exactly at the limit: taken


def test_a_nul_byte_names_the_included_file_and_its_line(tmp_path):
    (tmp_path / "part.yaml").write_bytes(b"nodes:\n  - id: env\n    cmd: 'true'\n    params: {a: 1\x00}\n")
    main = write(tmp_path / "main.yaml", "include: [part.yaml]\nnodes:\n  - {id: agent, cmd: 'true'}\n")
    with pytest.raises(LaunchError) as err:
        load(main)
    assert (err.value.file, err.value.line, err.value.column) == (tmp_path / "part.yaml", 4, 18), str(err.value)
    assert "NUL byte" in err.value.message and "internal error" not in str(err.value)


def test_ctl_step_out_of_range_is_a_usage_error_that_says_the_range(capsys):
    for n in ("-3", "0", "1e23", str(2**70)):
        with pytest.raises(SystemExit) as exit_:
            cli.main(["ctl", "step", n])
        assert exit_.value.code == 2, n
        assert f"from 1 to {cli.MAX_STEP:,}, got '{n}'" in capsys.readouterr().err


def uses_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> Path:
    (tmp_path / "hostile_node.py").write_text(textwrap.dedent(body))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "hostile_node", raising=False)
    return write(tmp_path / "g.yaml", "nodes:\n  - id: env\n    uses: hostile_node:Env\n")


def test_a_uses_module_that_exits_on_import_is_named_at_its_line(tmp_path, monkeypatch):
    path = uses_module(tmp_path, monkeypatch, "import sys\nsys.exit(3)\n")
    with pytest.raises(LaunchError) as err:
        load(path, node_class=load_node_class)
    assert err.value.line == 3 and "hostile_node:Env: importing it called sys.exit(3)" in err.value.message


def test_a_uses_module_that_sleeps_on_import_is_stopped_at_its_line(tmp_path, monkeypatch):
    path = uses_module(tmp_path, monkeypatch, "import time\ntime.sleep(3600)\n")
    started = time.monotonic()
    with pytest.raises(LaunchError) as err:
        load(path, node_class=bounded(load_node_class, 0.5))
    assert time.monotonic() - started < 10
    assert err.value.line == 3 and "took longer than 0.5 s" in err.value.message, str(err.value)
