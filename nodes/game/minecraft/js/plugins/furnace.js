'use strict'
/**
 * Smelting, a mechanic flying-squid 1.12 lacks entirely (a furnace is a block with no window and no
 * recipes) and minecraft-data 3.119 does not describe (it has crafting recipes only).
 *
 * The table below is Minecraft 1.16's furnace recipes for the items VAB's tasks can meet, and its fuel
 * values in items smelted per fuel item. actions.js applies a smelt on the server's side: it checks a
 * furnace is in reach (or places one from the inventory), takes the inputs and the fuel, and gives the
 * outputs. The world is paused between rounds, so the furnace's 10 seconds per item are not waited for.
 */

/** output item → the inputs that smelt into it (any one of them, one input per output). */
const SMELTING = {
  iron_ingot: ['iron_ore'],
  gold_ingot: ['gold_ore', 'nether_gold_ore'],
  netherite_scrap: ['ancient_debris'],
  glass: ['sand', 'red_sand'],
  stone: ['cobblestone'],
  smooth_stone: ['stone'],
  smooth_sandstone: ['sandstone'],
  cracked_stone_bricks: ['stone_bricks'],
  cracked_polished_blackstone_bricks: ['polished_blackstone_bricks'],
  charcoal: ['oak_log', 'birch_log', 'spruce_log', 'jungle_log', 'acacia_log', 'dark_oak_log',
    'oak_wood', 'birch_wood', 'spruce_wood', 'jungle_wood', 'acacia_wood', 'dark_oak_wood',
    'stripped_oak_log', 'stripped_birch_log', 'stripped_spruce_log', 'stripped_jungle_log',
    'stripped_acacia_log', 'stripped_dark_oak_log'],
  coal: ['coal_ore'],
  diamond: ['diamond_ore'],
  redstone: ['redstone_ore'],
  lapis_lazuli: ['lapis_ore'],
  quartz: ['nether_quartz_ore'],
  emerald: ['emerald_ore'],
  brick: ['clay_ball'],
  nether_brick: ['netherrack'],
  terracotta: ['clay'],
  green_dye: ['cactus'],
  lime_dye: ['sea_pickle'],
  dried_kelp: ['kelp'],
  sponge: ['wet_sponge'],
  popped_chorus_fruit: ['chorus_fruit'],
  baked_potato: ['potato'],
  cooked_beef: ['beef'],
  cooked_porkchop: ['porkchop'],
  cooked_chicken: ['chicken'],
  cooked_mutton: ['mutton'],
  cooked_rabbit: ['rabbit'],
  cooked_cod: ['cod'],
  cooked_salmon: ['salmon']
}

/** fuel item → items it smelts (Minecraft's burn time / 200 ticks). */
const FUEL = {
  lava_bucket: 100,
  coal_block: 80,
  dried_kelp_block: 20,
  blaze_rod: 12,
  coal: 8,
  charcoal: 8,
  crafting_table: 1.5,
  bookshelf: 1.5,
  chest: 1.5
}
for (const wood of ['oak', 'birch', 'spruce', 'jungle', 'acacia', 'dark_oak']) {
  for (const suffix of ['_log', '_wood', '_planks']) FUEL[wood + suffix] = 1.5
  FUEL[`stripped_${wood}_log`] = 1.5
  FUEL[`${wood}_slab`] = 0.75
  FUEL[`${wood}_sapling`] = 0.5
}
Object.assign(FUEL, {
  stick: 0.5,
  bowl: 0.5,
  wooden_pickaxe: 1,
  wooden_axe: 1,
  wooden_shovel: 1,
  wooden_sword: 1,
  wooden_hoe: 1,
  bamboo: 0.25
})

/** The order fuels are used in: the best ones last, so that logs go before coal the task may need. */
const FUEL_ORDER = Object.keys(FUEL).sort((a, b) => FUEL[a] - FUEL[b])

module.exports = { SMELTING, FUEL, FUEL_ORDER }
