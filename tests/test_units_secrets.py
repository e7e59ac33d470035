"""Secrets in the resolved launch file a run keeps (runs/<id>/launch.yaml, the recording's copy): written
redacted, and refused where such a file is run again. In-process, milliseconds."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml
from pydantic import Field

from kernel.launchfile import LaunchError, load
from kernel.launchfile.secrets import REDACTED, secret_name
from kernel.sdk.node import Node, NodeParams

GRAPH = """\
nodes:
  - id: env
    uses: hello.env
    inputs: {action: agent/action}
  - id: agent
    uses: hello.agent
    inputs: {obs: env/obs}
    params:
      api_key_env: OPENAI_API_KEY
      sampling: {max_tokens: 64, api_key: sk-nested-123}
      keys: {w: up}
      token: console-token-abcdefghijk
    env:
      OPENAI_API_KEY: sk-live-456
      HF_TOKEN: hf_secret_789
      LOG_LEVEL: debug
"""


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path


@pytest.mark.parametrize("name,secret", [
    ("token", True), ("OPENAI_API_KEY", True), ("HF_TOKEN", True), ("AWS_SECRET_ACCESS_KEY", True),
    ("apiKey", True), ("password", True), ("Authorization", True),
    ("api_key_env", False), ("max_tokens", False), ("keys", False), ("AWS_ACCESS_KEY_ID", False), ("judge", False)])
def test_a_key_is_secret_by_its_last_word(name, secret):
    assert secret_name(name) is secret


def test_the_resolved_file_writes_every_secret_redacted_and_the_rest_as_it_was(tmp_path):
    text = load(write(tmp_path / "g.yaml", GRAPH)).to_yaml()
    for value in ("sk-nested-123", "console-token-abcdefghijk", "sk-live-456", "hf_secret_789"):
        assert value not in text
    agent = next(n for n in yaml.safe_load(text)["nodes"] if n["id"] == "agent")
    assert agent["params"] == {"api_key_env": "OPENAI_API_KEY", "sampling": {"max_tokens": 64, "api_key": REDACTED},
                               "keys": {"w": "up"}, "token": REDACTED}
    assert agent["env"] == {"OPENAI_API_KEY": REDACTED, "HF_TOKEN": REDACTED, "LOG_LEVEL": "debug"}


class PhraseParams(NodeParams):
    phrase: str = Field(json_schema_extra={"secret": True})
    greeting: str = "hi"


class Phrase(Node):
    Params = PhraseParams


def test_a_field_its_params_model_declares_secret_is_redacted_whatever_its_name(tmp_path):
    path = write(tmp_path / "g.yaml",
                 "nodes:\n  - {id: door, uses: hello.env, params: {phrase: open-sesame, greeting: hey}}\n")
    text = load(path, node_class=lambda uses: Phrase).to_yaml()
    assert "open-sesame" not in text and f"phrase: {REDACTED}" in text and "greeting: hey" in text


def test_a_run_folders_launch_yaml_is_refused_where_it_holds_a_redacted_secret_until_it_is_given_again(tmp_path):
    kept = write(tmp_path / "launch.yaml", load(write(tmp_path / "g.yaml", GRAPH)).to_yaml())
    with pytest.raises(LaunchError) as caught:
        load(kept)
    err = caught.value
    assert err.file == kept and err.line is not None and err.key == "nodes[1].params.sampling.api_key"
    assert REDACTED in err.message and "--set agent.sampling.api_key=VALUE" in err.message
    with pytest.raises(LaunchError) as caught:  # given again, the next one is named: the env's
        load(kept, sets=["agent.sampling.api_key=sk-again", "agent.token=console-token-again"])
    assert caught.value.key == "nodes[1].env.OPENAI_API_KEY" and "${VAR}" in caught.value.message
