"""Reading VAB-Minecraft replies (nodes.game.minecraft.parsing): the six calls in the forms VAB
accepts, VAB's refusals of executor prompts, and the ``name/args`` echo."""

from __future__ import annotations

import pytest

from nodes.game.minecraft.parsing import (
    NO_ACTION,
    Craft,
    Equip,
    Execute,
    LookUp,
    ParseError,
    Smelt,
    TeleportToSpawn,
    action_text,
    as_call,
    check_prompt,
    echo,
    execute_goal_count,
    parse_action,
    parse_reply,
)

REPLY = ("OBSERVATION: a birch forest, a river to the left.\nTHOUGHT: I need logs first.\n"
         'ACTION: execute("collect wood", "logs", 3)')


def test_a_full_reply_gives_the_call_after_action():
    assert parse_reply(REPLY) == Execute("collect wood", "logs", 3)
    assert action_text(REPLY) == 'execute("collect wood", "logs", 3)'


@pytest.mark.parametrize("text, action", [
    ('craft("planks", 4)', Craft("planks", 4)),
    ("craft('planks')", Craft("planks")),
    ("craft(planks, 4)", Craft("planks", 4)),  # VAB strips quotes when there are any: bare names pass
    ('craft("planks", "4")', Craft("planks", 4)),  # the count's quotes too
    ('craft(item="Oak_Planks", num=2)', Craft("oak_planks", 2)),  # names are lower-cased
    ('craft(num=2, item="stick")', Craft("stick", 2)),  # keywords by name, in any order
    ('craft(obj="stick")', Craft("stick")),  # VAB's docstrings call it obj
    ('craft("minecraft:crafting_table")', Craft("crafting_table")),
    ('Craft ("stick", 1)', Craft("stick", 1)),  # VAB forgives the capital and the space
    ('smelt("iron_ingot", 2)', Smelt("iron_ingot", 2)),
    ('equip("stone_pickaxe")', Equip("stone_pickaxe")),
    ('look_up("stone_tool_materials")', LookUp("stone_tool_materials")),
    ("teleport_to_spawn()", TeleportToSpawn()),
    ('execute("find a river")', Execute("find a river")),
    ("execute(prompt='mine stone', goal_item='cobblestone', num=3)", Execute("mine stone", "cobblestone", 3)),
    ('execute("Mine iron_ore", "minecraft:iron_ore", 0)', Execute("Mine iron_ore", "iron_ore", 0)),  # VAB takes 0
])
def test_each_call_in_the_forms_vab_accepts(text, action):
    assert parse_action(text) == action


def test_a_default_count_is_one_but_is_not_echoed():
    assert Craft("stick").count == 1 and Smelt("glass", 3).count == 3
    assert echo(parse_action('craft("crafting_table")')) == "craft/crafting_table"


@pytest.mark.parametrize("action, shown", [
    (Craft("planks", 4), "craft/planks, 4"),
    (Execute("collect wood", "logs", 3), "execute/collect wood, logs, 3"),
    (Execute("find a river"), "execute/find a river"),
    (Equip("iron_pickaxe"), "equip/iron_pickaxe"),
    (LookUp("planks"), "look_up/planks"),
    (TeleportToSpawn(), "teleport_to_spawn"),
])
def test_the_echo_is_vabs_name_slash_args_form(action, shown):
    assert echo(action) == shown


@pytest.mark.parametrize("action", [Craft("planks", 4), Smelt("glass"), Equip("stone_pickaxe"), LookUp("logs"),
                                    TeleportToSpawn(), Execute("dig down"), Execute("kill a cow", "beef", 2)])
def test_as_call_reads_back_to_the_same_action(action):
    assert parse_action(as_call(action)) == action


@pytest.mark.parametrize("reply, text", [
    ('Thought: go.\nAction: craft("stick")', 'craft("stick")'),  # labels in any case
    ('ACTION:\n```python\ncraft("stick", 4)\n```', 'craft("stick", 4)'),  # a fenced block
    ("ACTION: `equip(\"stone_pickaxe\")`", 'equip("stone_pickaxe")'),  # backticks
    ('ACTION: I will call craft("stick") # two sticks', 'craft("stick")'),  # words before, a comment after
    ('ACTION: look_up("x")\nACTION: craft("y")', 'look_up("x")'),  # a second turn is ignored
    ('ACTION: craft("stick")\nFeedback on the Action: done', 'craft("stick")'),
    ('ACTION: craft("#1 planks")', 'craft("#1 planks")'),  # a # inside quotes is no comment
])
def test_the_call_text_is_found_as_vab_finds_it(reply, text):
    assert action_text(reply) == text


def test_the_first_call_by_position_is_taken():
    assert parse_reply('ACTION: craft("stick"); execute("mine stone")') == Craft("stick")


def test_no_action_label_is_an_error_that_shows_the_format():
    assert action_text("THOUGHT: hmm") is None
    with pytest.raises(ParseError, match='no "ACTION:" line'):
        parse_reply("OBSERVATION: trees\nTHOUGHT: chop them")
    with pytest.raises(ParseError, match="No action was given"):
        parse_action(NO_ACTION)


@pytest.mark.parametrize("text, says", [
    ("jump()", "jump is not a function you can call. Use one of craft, smelt, equip, teleport_to_spawn, look_up, "
               "execute"),
    ("craft the planks", "is not a function call"),
    ('craft("planks"', "is not a function call"),
    ('craft("planks)', "not closed"),
    ("craft()", "craft needs an argument"),
    ('craft("planks", 4, 5)', "craft takes at most 2 arguments"),
    ('craft("planks", four)', "must be a whole number written in digits, got 'four'"),
    ('craft("planks", 2.5)', "whole number"),
    ('smelt("glass", 0)', "must be at least 1, got 0"),
    ('craft(thing="planks")', "craft has no argument called 'thing'; its arguments are item, num"),
    ('craft("planks", item="stick")', "craft got item twice"),
    ('equip("a", "b")', "equip takes at most 1 argument,"),
    ('look_up("")', "empty item name"),
    ('teleport_to_spawn("home")', "teleport_to_spawn takes no argument"),
    ('execute("collect wood", "logs")', "execute takes 1 or 3 arguments, not 2"),
    ('execute("collect wood", "logs", 3, 4)', "execute takes at most 3 arguments"),
    ("execute(collect wood)", "must be strings in quotes"),
    ('execute("collect wood", logs, 3)', "must be strings in quotes"),
    ('execute("collect wood", "logs", many)', "third argument of execute (num) must be a whole number"),
])
def test_malformed_calls_say_what_is_wrong_and_what_is_allowed(text, says):
    with pytest.raises(ParseError) as info:
        parse_action(text)
    assert says in str(info.value)


@pytest.mark.parametrize("prompt, says", [
    ("craft a wooden_axe", "cannot craft. Call craft(item, num)"),
    ("Craft planks", "cannot craft"),
    ("smelt iron", "cannot smelt. Call smelt"),
    ("equip the pickaxe", "cannot equip"),
    ("place crafting_table", "does not craft or place a crafting table"),
    ("put down the crafting table", "crafting table"),
    ("place the furnace", "does not smelt or place a furnace"),
    ("use the axe to chop trees", "plain verb-object phrase"),
    ("use shears on sheep", "plain verb-object phrase"),
    ("dig a hole and jump in", "a prompt with 'and' is refused"),
    ("hold down left button to punch the tree for wood", "too long (10 words; fewer than 8"),
    ("", "prompt of execute is empty"),
])
def test_vabs_refusals_of_executor_prompts(prompt, says):
    with pytest.raises(ParseError) as info:
        check_prompt(prompt)
    assert says in str(info.value)


def test_a_refusal_suggests_two_simple_prompts_near_the_refused_one():
    with pytest.raises(ParseError) as info:
        check_prompt("dig a hole and jump in")
    assert '"dig a hole" or ' in str(info.value)


@pytest.mark.parametrize("prompt", ["collect wood", "mine iron_ore", "break stone, obtain iron ore", "find a river",
                                    "CRAFT planks",  # VAB tests the word as written and capitalised only
                                    "use the axe", "kill sheep"])
def test_simple_prompts_pass(prompt):
    check_prompt(prompt)


def test_refusals_apply_through_execute():
    with pytest.raises(ParseError, match="cannot craft"):
        parse_reply('ACTION: execute("craft a wooden_axe", "wooden_axe", 1)')


def test_the_executor_goal_is_more_than_held_up_to_a_stack():
    assert execute_goal_count(held=2, num=3) == 5
    assert execute_goal_count(held=10, num=64) == 64
    assert execute_goal_count(held=0, num=1) == 1
