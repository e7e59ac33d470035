'use strict'
/**
 * Block drops as survival Minecraft gives them, a flying-squid plugin.
 *
 * What flying-squid 1.12 already does: on a finished dig it removes the block and spawns one item entity per
 * entry of minecraft-data's blockLoot, whatever the player holds; a player within 1.75 blocks picks item
 * entities up (one item per entity). Its dig-time check never cancels a dig (it awaits nothing), so the
 * digging speed is the client's: mineflayer digs with Minecraft's time for the held tool.
 *
 * What this plugin changes, because the tasks depend on it:
 * - harvest tools: a block whose minecraft-data entry lists harvestTools drops nothing unless one of them is
 *   held (iron ore needs a stone pickaxe or better; stone needs any pickaxe);
 * - which loot entries apply: minecraft-data lists silk-touch and normal drops as alternatives with a
 *   chance of 0.5 each; without silk touch the normal one always applies (stone gives cobblestone, coal ore
 *   gives coal); crops give their ripe drops only when ripe; stack sizes follow stackSizeRange;
 * - a few tables minecraft-data gets wrong are replaced by Minecraft's own chances (leaves: 5% sapling,
 *   2% stick, 0.5% apple for oak; grass: 12.5% wheat seeds);
 * - sugar cane and bamboo: the whole stalk above the dug block breaks and drops too.
 * Drops land at the block's centre with no throw, so the body walking there picks them up.
 */

const { Vec3 } = require('vec3')
const { seeded, between } = require('./rng')

const OVERRIDES = {
  oak_leaves: [['oak_sapling', 0.05, 1, 1], ['stick', 0.02, 1, 2], ['apple', 0.005, 1, 1]],
  birch_leaves: [['birch_sapling', 0.05, 1, 1], ['stick', 0.02, 1, 2]],
  grass: [['wheat_seeds', 0.125, 1, 1]],
  tall_grass: [['wheat_seeds', 0.125, 1, 1]],
  fern: [['wheat_seeds', 0.125, 1, 1]]
}
const STALKS = new Set(['sugar_cane', 'bamboo'])

/** The items (name, count) that digging `block` with `held` (an item or null) yields. */
function dropsFor (registry, block, held, rng) {
  const info = registry.blocksByName[block.name]
  if (info?.harvestTools && !(held && info.harvestTools[held.type])) return []
  if (OVERRIDES[block.name]) {
    return OVERRIDES[block.name].filter(([, chance]) => rng() < chance).map(([item, , lo, hi]) => [item, between(rng, lo, hi)])
  }
  const loot = registry.blockLoot[block.name]
  if (!loot) return []
  const age = block.getProperties?.().age
  const out = []
  for (const d of loot.drops) {
    if (d.silkTouch) continue
    if (d.blockAge !== undefined && age !== d.blockAge) continue
    const always = d.noSilkTouch || d.dropChance >= 1 || (d.blockAge !== undefined)
    if (!always && rng() >= d.dropChance) continue
    const [lo, hi] = d.stackSizeRange ?? [1, 1]
    const n = between(rng, Math.max(lo, 1), Math.max(hi, 1))
    if (registry.itemsByName[d.item]) out.push([d.item, n])
  }
  return out
}

function dropItems (serv, world, position, items) {
  const { registry } = serv
  for (const [name, count] of items) {
    for (let i = 0; i < count; i++) {
      serv.spawnObject(registry.entitiesByName.item.id, world, position, {
        velocity: new Vec3(0, 0, 0), itemId: registry.itemsByName[name].id, itemCount: 1, pickupTime: 200, deathTime: 5 * 60 * 1000
      })
    }
  }
}

module.exports.server = function (serv) {
  serv.dropsRng = serv.dropsRng ?? seeded(0)
  serv.dropItems = (world, position, items) => dropItems(serv, world, position, items)
}

module.exports.player = function (player, serv) {
  const { registry } = serv
  player.on('dug_cancel', async (data) => {
    const held = player.inventory.slots[36 + player.heldItemSlot]
    const items = dropsFor(registry, data.block, held, serv.dropsRng)
    // the stalk above a dug sugar cane or bamboo breaks with it
    if (STALKS.has(data.block.name)) {
      let pos = data.position.offset(0, 1, 0)
      for (;;) {
        const above = await player.world.getBlock(pos)
        if (above.name !== data.block.name) break
        items.push([data.block.name, 1])
        await serv.setBlock(player.world, pos, 0)
        pos = pos.offset(0, 1, 0)
      }
    }
    // flying-squid spawns what is in data.drops: empty it and spawn ours instead
    data.drops.length = 0
    dropItems(serv, player.world, data.position.offset(0.5, 0.2, 0.5), items)
  })
}

module.exports.dropsFor = dropsFor
