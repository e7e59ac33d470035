'use strict'
/**
 * Where a task's `init_command` puts things, relative to the spawn (x east, z south, dy from the feet: -1 is
 * the ground). VAB's MineRL setup turns each name into Minecraft commands that clear a flat field around the
 * agent and then fill rows of plants and summon lines of mobs (NoAI) and items at fixed offsets, and gives
 * the agent a strength effect that kills any mob in one hit. This table keeps those placements and counts,
 * written as rows and lines; world.js builds the rows into the terrain, the sidecar spawns the mobs and items.
 */

const range = (a, b) => Array.from({ length: b - a + 1 }, (_, i) => a + i)

/** A name → {rows: [{block, x: [x0, x1], z, dy}], mobs: {name, x, z: [...]}, items: [{item, count, x, z: [...]}]} */
const LAYOUT = {
  water: {
    rows: [
      { block: 'sand', x: [-15, 15], z: 10, dy: -3 },
      { block: 'water', x: [-15, 15], z: 10, dy: -2 },
      { block: 'water', x: [-15, 15], z: 10, dy: -1 },
      { block: 'dirt', x: [-15, 15], z: 11, dy: -1 },
      { block: 'dirt', x: [-15, 15], z: 9, dy: -1 },
      { block: 'dirt', x: [-16, -16], z: 10, dy: -1 },
      { block: 'dirt', x: [16, 16], z: 10, dy: -1 }
    ]
  },
  sugar_cane: { rows: [{ block: 'sand', x: [-15, 15], z: 11, dy: -1 }, { block: 'sugar_cane', x: [-15, 15], z: 11, dy: 0 }] },
  wheat: { rows: [{ block: 'farmland', x: [-15, 15], z: 9, dy: -1 }, { block: 'wheat', x: [-15, 15], z: 9, dy: 0, age: 7 }] },
  potatoes: { rows: [{ block: 'farmland', x: [-15, 15], z: 8, dy: -1 }, { block: 'potatoes', x: [-15, 15], z: 8, dy: 0, age: 7 }] },
  carrots: { rows: [{ block: 'farmland', x: [-15, 15], z: 7, dy: -1 }, { block: 'carrots', x: [-15, 15], z: 7, dy: 0, age: 7 }] },
  bamboo: { rows: [{ block: 'dirt', x: [-15, 15], z: 6, dy: -1 }, { block: 'bamboo', x: [-15, 15], z: 6, dy: 0 }] },
  lily_of_the_valley: { rows: [{ block: 'dirt', x: [-15, -1], z: 4, dy: -1 }, { block: 'lily_of_the_valley', x: [-15, -1], z: 4, dy: 0 }] },
  oxeye_daisy: { rows: [{ block: 'dirt', x: [0, 15], z: 5, dy: -1 }, { block: 'oxeye_daisy', x: [0, 15], z: 5, dy: 0 }] },
  red_tulip: { rows: [{ block: 'dirt', x: [-15, 15], z: 4, dy: -1 }, { block: 'red_tulip', x: [-15, 15], z: 4, dy: 0 }] },
  orange_tulip: { rows: [{ block: 'dirt', x: [-15, 15], z: 4, dy: -1 }, { block: 'orange_tulip', x: [-15, 15], z: 4, dy: 0 }] },
  azure_bluet: { rows: [{ block: 'dirt', x: [0, 15], z: 6, dy: -1 }, { block: 'azure_bluet', x: [0, 15], z: 6, dy: 0 }] },
  obsidian: { rows: [{ block: 'obsidian', x: [-5, 5], z: 2, dy: 0 }] },
  blackstone: { rows: [{ block: 'blackstone', x: [-3, 3], z: 3, dy: 0 }] },
  cow: { mobs: { name: 'cow', x: -10, z: range(-1, 12) } },
  sheep: { mobs: { name: 'sheep', x: 10, z: range(-1, 9) } },
  chicken: { mobs: { name: 'chicken', x: -8, z: range(-1, 12) } },
  rabbit: { mobs: { name: 'rabbit', x: 12, z: range(-1, 9) } },
  spider: { mobs: { name: 'spider', x: 10, z: [2, 6, 11, 14, ...range(16, 25)] } },
  skeleton: { mobs: { name: 'skeleton', x: -10, z: range(12, 25) }, items: [{ item: 'bone', count: 3, x: -10, z: [12, 16, 20, 24] }] },
  enderman: {
    mobs: { name: 'enderman', x: 8, z: [7, ...range(13, 25)] },
    items: [{ item: 'ender_pearl', count: 2, x: 8, z: [7, 13, 15, 17, 19, 25] }, { item: 'ender_eye', count: 2, x: 8, z: [12, 14, 16, 18, 24] }]
  },
  slime: { mobs: { name: 'slime', x: -8, z: [11, ...range(13, 25)] } },
  creeper: { mobs: { name: 'creeper', x: -6, z: [4, ...range(8, 20)] }, items: [{ item: 'gunpowder', count: 1, x: -6, z: [6, 10, 14, 18] }] },
  shulker: { mobs: { name: 'shulker', x: 6, z: [10, ...range(12, 25)] } },
  egg: { items: [{ item: 'egg', count: 3, x: -8, z: range(-1, 9) }] }
}

/** The field VAB clears around the agent when a task has an init_command: flat grass, no trees. */
const CLEARED = { x: [-30, 30], z: [-30, 50] }
const FLAT = { x: [-50, 50], z: [-50, 50] }

/** {"x,z": [{block, dy, age}]} for a task's init_command. */
function blockRows (names) {
  const out = new Map()
  for (const name of names) {
    for (const row of LAYOUT[name]?.rows ?? []) {
      for (let x = row.x[0]; x <= row.x[1]; x++) {
        const key = `${x},${row.z}`
        if (!out.has(key)) out.set(key, [])
        out.get(key).push(row)
      }
    }
  }
  return out
}

module.exports = { LAYOUT, CLEARED, FLAT, blockRows }
