'use strict'
/**
 * The world a VAB task is played in: a flying-squid generator whose every block is a pure function of
 * (task, seed) and the block's position relative to the episode's origin.
 *
 * Why regions: flying-squid builds its world once at start-up and cannot regenerate it. Each episode
 * therefore gets a fresh region of its own, REGION_STRIDE blocks east of the last one, and the body is
 * teleported there. A reset costs only the generation of the chunks around the new spawn (a fraction of a
 * second), never a server restart, and since blocks depend on position relative to the region's origin and
 * never on generation order, the same task and seed give the same blocks in whichever region they land.
 *
 * What is generated (all from a hash of seed and position, no shared random state):
 * - terrain: bedrock, stone, three layers of dirt, grass; gentle hills around y=64 (the body can walk it);
 * - the biome's look: VAB's `plains` (sparse oaks, grass and flowers) and `oak_forest` (dense oaks);
 * - trees: oaks of 4 to 6 logs with leaves, four of them always within 10 blocks of spawn;
 * - ores at their Minecraft depths: coal, iron, gold, redstone, lapis, diamond as small veins in stone, and
 *   one guaranteed vein of each (two of iron) within 6 blocks of spawn so that every task is solvable;
 * - a pond 8 blocks from spawn with a sand shore and sugar cane on it;
 * - for a task with an `init_command`, VAB's field (init_layout.js): flat grass cleared of trees 30 blocks
 *   around spawn, and the task's rows of water, sugar cane, crops, flowers, obsidian or blackstone; the four
 *   near trees and the pond move just outside the field. Its mobs and items are spawned by the sidecar.
 */

const { CLEARED, FLAT, blockRows } = require('./init_layout')

const SURFACE = 64
const REGION_STRIDE = 2048

/** 32-bit hash of integers: the only source of randomness, so a block never depends on generation order. */
function hash (...ints) {
  let h = 0x811c9dc5
  for (const v of ints) {
    h = Math.imul(h ^ (v | 0), 0x01000193)
    h ^= h >>> 15
    h = Math.imul(h, 0x2c1b3c6d)
    h ^= h >>> 12
  }
  return (h >>> 0)
}
const unit = (...ints) => hash(...ints) / 4294967296

/** A string's 31-bit hash, to turn a task name into an integer. */
function strHash (s) {
  let h = 7
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0
  return h >>> 1
}

/** Smooth value noise in [0, 1) on a grid of `scale` blocks. */
function noise (seed, x, z, scale) {
  const gx = Math.floor(x / scale)
  const gz = Math.floor(z / scale)
  const fx = x / scale - gx
  const fz = z / scale - gz
  const sx = fx * fx * (3 - 2 * fx)
  const sz = fz * fz * (3 - 2 * fz)
  const a = unit(seed, gx, gz)
  const b = unit(seed, gx + 1, gz)
  const c = unit(seed, gx, gz + 1)
  const d = unit(seed, gx + 1, gz + 1)
  return (a * (1 - sx) + b * sx) * (1 - sz) + (c * (1 - sx) + d * sx) * sz
}

const POND = { x: 8, z: 6, r: 3 }

/** Ore veins by depth: Minecraft 1.16's ranges, with a per-cell chance (cells are 8 blocks cubed). */
const ORES = [
  { name: 'diamond_ore', minY: 5, maxY: 15, chance: 0.10 },
  { name: 'redstone_ore', minY: 5, maxY: 15, chance: 0.18 },
  { name: 'gold_ore', minY: 5, maxY: 31, chance: 0.10 },
  { name: 'lapis_ore', minY: 5, maxY: 30, chance: 0.08 },
  { name: 'iron_ore', minY: 5, maxY: 63, chance: 0.25 },
  { name: 'coal_ore', minY: 5, maxY: 127, chance: 0.30 }
]

/** One vein of each ore near spawn (local x, y, z), so that no task depends on luck. */
const GUARANTEED_VEINS = [
  { name: 'coal_ore', x: 3, y: 58, z: -4 },
  { name: 'iron_ore', x: -4, y: 50, z: 3 },
  { name: 'iron_ore', x: 4, y: 44, z: 4 },
  { name: 'lapis_ore', x: -5, y: 24, z: -4 },
  { name: 'gold_ore', x: 5, y: 27, z: -3 },
  { name: 'redstone_ore', x: -3, y: 13, z: -5 },
  { name: 'diamond_ore', x: 3, y: 11, z: 5 }
]

const FIXED_TREES = [[-6, -4], [5, -8], [-8, 7], [-3, 9]]

/** Trees and pond for a task with an init_command: just outside VAB's cleared field. */
const FIELD_TREES = [[-34, -4], [34, 8], [-6, -34], [12, -34]]
const FIELD_POND = { x: 40, z: 6, r: 3 }

const inside = (box, x, z) => x >= box.x[0] && x <= box.x[1] && z >= box.z[0] && z <= box.z[1]

/** An episode's parameters: the world of (task, seed), with its origin in world coordinates. */
class Region {
  constructor (index, task, seed, biome, initCommand) {
    this.index = index
    this.task = task
    this.seed = seed
    this.biome = biome
    this.initCommand = initCommand
    this.origin = { x: index * REGION_STRIDE + REGION_STRIDE / 2, z: 0 }
    this.key = hash(strHash(task), seed | 0)
    this.field = initCommand.length > 0 // VAB clears a flat field for the task's rows and mobs
    this.rows = blockRows(initCommand)
    this.pond = this.field ? FIELD_POND : POND
    this.fixedTrees = this.field ? FIELD_TREES : FIXED_TREES
  }

  height (lx, lz) {
    const dSpawn = this.field ? Math.max(lx - FLAT.x[1], FLAT.x[0] - lx, lz - FLAT.z[1], FLAT.z[0] - lz) : Math.hypot(lx, lz) - 6
    const dPond = Math.hypot(lx - this.pond.x, lz - this.pond.z)
    const hill = 4 * noise(this.key, lx, lz, 24) + 2 * noise(this.key + 1, lx, lz, 9) - 3
    // flat around spawn (VAB's field) and the pond, hills further out
    const flatness = Math.min(1, Math.max(0, (Math.min(dSpawn, dPond - 6)) / 10))
    return SURFACE + Math.round(hill * flatness)
  }

  tree (cellX, cellZ) {
    // one candidate trunk per 5×5 cell
    const density = this.biome === 'oak_forest' ? 0.55 : 0.1
    if (unit(this.key, 11, cellX, cellZ) >= density) return null
    const x = cellX * 5 + Math.floor(unit(this.key, 12, cellX, cellZ) * 5)
    const z = cellZ * 5 + Math.floor(unit(this.key, 13, cellX, cellZ) * 5)
    if (Math.hypot(x, z) < 4 || Math.hypot(x - this.pond.x, z - this.pond.z) < this.pond.r + 3 || Math.abs(x) + Math.abs(z) < 8) return null
    if (this.field && inside(CLEARED, x, z)) return null
    return { x, z, h: 4 + Math.floor(unit(this.key, 14, cellX, cellZ) * 3) }
  }

  treesNear (lx0, lz0, lx1, lz1) {
    const out = this.fixedTrees.map(([x, z], i) => ({ x, z, h: 4 + (hash(this.key, 20 + i) % 3) }))
    for (let cx = Math.floor((lx0 - 3) / 5); cx <= Math.floor((lx1 + 3) / 5); cx++) {
      for (let cz = Math.floor((lz0 - 3) / 5); cz <= Math.floor((lz1 + 3) / 5); cz++) {
        const t = this.tree(cx, cz)
        if (t) out.push(t)
      }
    }
    return out.filter(t => t.x >= lx0 - 3 && t.x <= lx1 + 3 && t.z >= lz0 - 3 && t.z <= lz1 + 3)
  }

  ore (lx, y, lz) {
    for (const v of GUARANTEED_VEINS) {
      if ((lx - v.x) ** 2 + (y - v.y) ** 2 + (lz - v.z) ** 2 <= 2.0 && unit(this.key, 30, lx, y, lz) < 0.8) return v.name
    }
    const cx = Math.floor(lx / 8)
    const cy = Math.floor(y / 8)
    const cz = Math.floor(lz / 8)
    for (let i = 0; i < ORES.length; i++) {
      const o = ORES[i]
      if (cy * 8 + 4 < o.minY || cy * 8 + 4 > o.maxY) continue
      if (unit(this.key, 40 + i, cx, cy, cz) >= o.chance) continue
      const vx = cx * 8 + 2 + (hash(this.key, 50 + i, cx, cy, cz) % 4)
      const vy = cy * 8 + 2 + (hash(this.key, 60 + i, cx, cy, cz) % 4)
      const vz = cz * 8 + 2 + (hash(this.key, 70 + i, cx, cy, cz) % 4)
      if ((lx - vx) ** 2 + (y - vy) ** 2 + (lz - vz) ** 2 <= 1.5 && unit(this.key, 80, lx, y, lz) < 0.75) return o.name
      return null
    }
    return null
  }
}

/** The generator flying-squid calls per chunk; `options.regions` (a Map index → Region) is shared with the sidecar. */
function generation (options) {
  const { registry } = options
  const regions = options.regions
  const Chunk = require('prismarine-chunk')(registry)
  const B = registry.blocksByName
  const state = (name) => B[name].defaultState
  const defaultRegion = new Region(-1, 'void', 0, 'plains', [])

  function regionOf (x) {
    const index = Math.floor(x / REGION_STRIDE)
    return regions.get(index) ?? new Region(index, defaultRegion.task, 0, 'plains', [])
  }

  return function generateChunk (chunkX, chunkZ) {
    const chunk = new Chunk()
    const region = regionOf(chunkX * 16 + 8)
    const ox = region.origin.x
    const oz = region.origin.z
    const biome = registry.biomesByName[region.biome === 'oak_forest' ? 'forest' : 'plains'].id
    const set = (x, y, z, name) => chunk.setBlockStateId({ x, y, z }, typeof name === 'number' ? name : state(name))
    for (let x = 0; x < 16; x++) {
      for (let z = 0; z < 16; z++) {
        const lx = chunkX * 16 + x - ox
        const lz = chunkZ * 16 + z - oz
        const h = region.height(lx, lz)
        const pond = region.pond
        const dPond = Math.hypot(lx - pond.x, lz - pond.z)
        set(x, 0, z, 'bedrock')
        for (let y = 1; y < h - 3; y++) set(x, y, z, region.ore(lx, y, lz) ?? 'stone')
        if (dPond < pond.r) {
          for (let y = h - 3; y < h - 2; y++) set(x, y, z, 'sand')
          set(x, h - 2, z, 'water'); set(x, h - 1, z, 'water')
        } else if (dPond < pond.r + 1.6) {
          for (let y = h - 3; y <= h; y++) set(x, y, z, 'sand')
          const cane = unit(region.key, 90, lx, lz) < 0.45
          if (cane) for (let k = 1; k <= 2 + (hash(region.key, 91, lx, lz) % 2); k++) set(x, h + k, z, 'sugar_cane')
        } else {
          for (let y = h - 3; y < h; y++) set(x, y, z, 'dirt')
          set(x, h, z, B.grass_block.minStateId + 1) // snowy=false
          const rows = region.rows.get(`${lx},${lz}`)
          if (rows) {
            // feet are at h + 1: dy -1 replaces the ground
            for (const row of rows) set(x, h + 1 + row.dy, z, row.age !== undefined ? B[row.block].minStateId + row.age : row.block)
          } else if (!(region.field && inside(CLEARED, lx, lz)) && unit(region.key, 95, lx, lz) < 0.08 && Math.hypot(lx, lz) > 2) {
            const r = unit(region.key, 96, lx, lz)
            set(x, h + 1, z, r < 0.8 ? 'grass' : (r < 0.9 ? 'dandelion' : 'poppy'))
          }
        }
        for (let y = 0; y < 256; y++) {
          chunk.setSkyLight({ x, y, z }, 15)
          chunk.setBiome({ x, y, z }, biome)
        }
      }
    }
    // trees whose trunk or leaves reach into this chunk
    const lx0 = chunkX * 16 - ox
    const lz0 = chunkZ * 16 - oz
    for (const t of region.treesNear(lx0, lz0, lx0 + 15, lz0 + 15)) {
      const base = region.height(t.x, t.z)
      const put = (lx, y, lz, name, onlyAir) => {
        const x = lx - lx0
        const z = lz - lz0
        if (x < 0 || x > 15 || z < 0 || z > 15) return
        if (onlyAir && chunk.getBlockStateId({ x, y, z }) !== 0) return
        set(x, y, z, name)
      }
      put(t.x, base, t.z, 'dirt')
      for (let dy = -2; dy <= 1; dy++) {
        const r = dy >= 0 ? 1 : 2
        for (let dx = -r; dx <= r; dx++) {
          for (let dz = -r; dz <= r; dz++) {
            if (Math.abs(dx) === r && Math.abs(dz) === r && unit(region.key, 97, t.x + dx, dy, t.z + dz) < 0.5) continue
            put(t.x + dx, base + t.h + dy, t.z + dz, 'oak_leaves', true)
          }
        }
      }
      for (let k = 1; k <= t.h; k++) put(t.x, base + k, t.z, 'oak_log', false)
    }
    return chunk
  }
}

module.exports = generation
module.exports.Region = Region
module.exports.REGION_STRIDE = REGION_STRIDE
module.exports.SURFACE = SURFACE
