'use strict'
/**
 * VAB's high-level actions on the body: craft, smelt, equip, teleport_to_spawn and execute.
 *
 * Where the work happens, and why:
 * - craft and smelt are applied on the server's side of the sidecar (it holds both server and bot). flying-squid
 *   1.12 has no crafting grid, crafting-table window or furnace window, so mineflayer's window clicks would go
 *   nowhere; the rules are Minecraft's all the same: recipes from minecraft-data (through prismarine-recipe, the
 *   one mineflayer's bot.recipesFor uses), a crafting table within reach for 3×3 recipes (placed from the
 *   inventory if there is none, as VAB does), a furnace and fuel for smelting (plugins/furnace.js).
 * - equip, teleport_to_spawn and execute move the body through mineflayer.
 * - execute is a scripted low-level executor standing in for VAB's Steve-1 (a learned policy on a GPU): it
 *   reads a verb-object subgoal ("mine iron_ore", "kill cow"), finds the nearest block or mob that yields the
 *   goal item, walks there with mineflayer-pathfinder (digging its way where needed), digs with the best tool
 *   in the inventory (mineflayer-tool) or attacks, and picks up the drops (mineflayer-collectblock), within a
 *   budget of game ticks. It reports whether the subgoal was reached.
 *
 * Every action returns {success, message}: a failed action is an ordinary result with the reason in words.
 */

const { Vec3 } = require('vec3')
const { pathfinder, Movements, goals } = require('mineflayer-pathfinder')
const { plugin: collectBlock } = require('mineflayer-collectblock')
const { plugin: toolPlugin } = require('mineflayer-tool')
const { SMELTING, FUEL, FUEL_ORDER } = require('./plugins/furnace')

const REACH = 4.5
const HOTBAR = 36 // first hotbar slot of the player's inventory window
const DEFAULT_MAX_TICKS = 1200 // 60 s of game time per execute call

function load (bot) {
  bot.loadPlugin(pathfinder)
  bot.loadPlugin(toolPlugin)
  bot.loadPlugin(collectBlock)
  const moves = new Movements(bot)
  moves.allowParkour = false
  moves.allowSprinting = false
  moves.canOpenDoors = false
  moves.scafoldingBlocks = [] // never build with what the task gathered (it would vanish from the inventory)
  bot.pathfinder.setMovements(moves)
}

// ---------- the inventory, kept on the server (the bot's copy follows by set_slot packets) ----------

const slotsOf = (side) => side.player.inventory.slots

/** {name: count} over the 36 storage and hotbar slots, as VAB's inventory line counts them. */
function inventoryCounts (side) {
  const out = {}
  for (let s = 9; s <= 44; s++) {
    const it = slotsOf(side)[s]
    if (it && it.count > 0) out[it.name] = (out[it.name] ?? 0) + it.count
  }
  return out
}

function countOf (side, name) {
  return inventoryCounts(side)[name] ?? 0
}

function heldName (side) {
  const it = slotsOf(side)[HOTBAR + side.player.heldItemSlot]
  return it && it.count > 0 ? it.name : 'none'
}

function itemInfo (side, name) {
  const info = side.serv.registry.itemsByName[name]
  if (!info) throw new Error(`no Minecraft 1.16.5 item is named ${JSON.stringify(name)}`)
  return info
}

function giveItem (side, name, count) {
  const Item = require('prismarine-item')(side.serv.registry)
  const info = itemInfo(side, name)
  if (!Number.isInteger(count) || count < 1) throw new Error(`give: count must be a positive integer, not ${JSON.stringify(count)}`)
  let left = count
  const inv = side.player.inventory
  const order = [...Array(9).keys()].map(i => HOTBAR + i).concat([...Array(27).keys()].map(i => 9 + i))
  for (const s of order) {
    const it = inv.slots[s]
    if (it && it.type === info.id && it.count < info.stackSize) {
      const n = Math.min(left, info.stackSize - it.count)
      inv.updateSlot(s, new Item(info.id, it.count + n))
      left -= n
    }
    if (left === 0) return
  }
  for (const s of order) {
    if (!inv.slots[s]) {
      const n = Math.min(left, info.stackSize)
      inv.updateSlot(s, new Item(info.id, n))
      left -= n
    }
    if (left === 0) return
  }
  throw new Error(`the inventory is full: ${left} ${name} did not fit`)
}

function takeItem (side, name, count) {
  const Item = require('prismarine-item')(side.serv.registry)
  const inv = side.player.inventory
  let left = count
  for (let s = 44; s >= 9 && left > 0; s--) {
    const it = inv.slots[s]
    if (!it || it.name !== name) continue
    const n = Math.min(left, it.count)
    inv.updateSlot(s, it.count - n > 0 ? new Item(it.type, it.count - n) : null)
    left -= n
  }
  if (left > 0) throw new Error(`internal: ${left} ${name} missing after the check`)
}

function clearInventory (side) {
  const inv = side.player.inventory
  for (let s = 0; s < inv.slots.length; s++) if (inv.slots[s]) inv.updateSlot(s, null)
}

/** Wait until the bot's copy of the inventory equals the server's (set_slot packets in flight). */
async function settleInventory (side) {
  const t0 = Date.now()
  for (;;) {
    const same = [...Array(36).keys()].every(i => {
      const a = side.player.inventory.slots[9 + i]
      const b = side.bot.inventory.slots[9 + i]
      return (a?.type ?? -1) === (b?.type ?? -1) && (a?.count ?? 0) === (b?.count ?? 0)
    })
    if (same || Date.now() - t0 > 3000) return
    await sleep(20)
  }
}

async function selectHotbar (side, i) {
  side.bot.setQuickBarSlot(i)
  const t0 = Date.now()
  while (side.player.heldItemSlot !== i && Date.now() - t0 < 2000) await sleep(20)
}

const sleep = (ms) => new Promise(resolve => setTimeout(resolve, ms))
const ok = (message, extra = {}) => ({ success: true, message, ...extra })
const fail = (message, extra = {}) => ({ success: false, message, ...extra })
const plain = (name) => String(name ?? '').trim().replace(/^minecraft:/, '')

// ---------- blocks that must be in reach: crafting table, furnace ----------

function blockInReach (side, name) {
  const bot = side.bot
  const id = side.serv.registry.blocksByName[name].id
  return bot.findBlock({ matching: id, maxDistance: REACH + 1, useExtraInfo: (b) => bot.entity.position.offset(0, 1.6, 0).distanceTo(b.position.offset(0.5, 0.5, 0.5)) <= REACH })
}

/** Put a `name` block from the inventory on the ground next to the body, as VAB's agent places its table. */
async function placeFromInventory (side, name) {
  const bot = side.bot
  const here = bot.entity.position.floored()
  const spots = [[1, 0], [-1, 0], [0, 1], [0, -1], [1, 1], [-1, -1], [1, -1], [-1, 1], [2, 0], [0, 2], [-2, 0], [0, -2]]
  for (const dy of [0, 1, -1]) {
    for (const [dx, dz] of spots) {
      const pos = here.offset(dx, dy, dz)
      const at = await side.serv.overworld.getBlock(pos)
      const below = await side.serv.overworld.getBlock(pos.offset(0, -1, 0))
      if ((at.name === 'air' || at.name === 'grass') && below.boundingBox === 'block') {
        takeItem(side, name, 1)
        await side.serv.setBlock(side.serv.overworld, pos, side.serv.registry.blocksByName[name].defaultState)
        const t0 = Date.now()
        while (bot.blockAt(pos)?.name !== name && Date.now() - t0 < 2000) await sleep(20)
        return bot.blockAt(pos)
      }
    }
  }
  return null
}

async function needStation (side, name) {
  const near = blockInReach(side, name)
  if (near) return { block: near, placed: false }
  if (countOf(side, name) > 0) {
    const placed = await placeFromInventory(side, name)
    if (placed) return { block: placed, placed: true }
    // in a one-block tunnel there is nowhere to set it down: the one carried serves where it is
    return { block: null, placed: false, carried: true }
  }
  return { error: `you need a ${name} within reach or in your inventory` }
}

/** A station placed from the inventory for one craft or smelt goes back into it afterwards (a furnace only
 *  with a pickaxe to mine it, as in Minecraft), so the body carries its table and furnace from place to place
 *  the way VAB's agent does, instead of leaving one behind at every craft. */
async function takeBack (side, st, name) {
  if (!st.placed || !st.block) return ''
  if (name === 'furnace' && !Object.keys(inventoryCounts(side)).some((n) => n.endsWith('_pickaxe'))) return ''
  await side.serv.setBlock(side.serv.overworld, st.block.position, 0)
  giveItem(side, name, 1)
  return ` and took the ${name} back`
}

// ---------- craft ----------

/** id → count a recipe takes from the grid. From its shape or ingredient list: prismarine-recipe's delta
 *  nets the containers a recipe gives back (cake: milk buckets in, buckets out) to zero. */
function consumedBy (recipe) {
  const out = new Map()
  const cells = recipe.inShape ? recipe.inShape.flat() : (recipe.ingredients ?? [])
  // shapeless ingredients carry count -1 (taken), shaped cells +1
  for (const c of cells) if (c && c.id >= 0) out.set(c.id, (out.get(c.id) ?? 0) + Math.abs(c.count ?? 1))
  return out
}

/** id → count a recipe leaves in the grid. */
function leftBy (recipe) {
  const out = new Map()
  for (const c of (recipe.outShape ?? []).flat()) if (c && c.id >= 0) out.set(c.id, (out.get(c.id) ?? 0) + (c.count ?? 1))
  return out
}

async function craft (side, item, num) {
  item = plain(item)
  const reg = side.serv.registry
  if (!reg.itemsByName[item]) return fail(`cannot craft ${item}: no Minecraft item has that name`)
  if (!Number.isInteger(num) || num < 1) return fail(`cannot craft ${item}: the number must be a positive integer, not ${JSON.stringify(num)}`)
  const { Recipe } = require('prismarine-recipe')(reg)
  const recipes = Recipe.find(reg.itemsByName[item].id, null)
  if (recipes.length === 0) return fail(`cannot craft ${item}: it has no crafting recipe (it may be smelted, mined or found instead)`)
  const have = inventoryCounts(side)
  const nameOf = (id) => reg.items[id].name
  let best = null
  let bestMissing = null
  for (const r of recipes) {
    const times = Math.ceil(num / r.result.count)
    const missing = []
    for (const [id, n] of consumedBy(r)) {
      const need = n * times
      const got = have[nameOf(id)] ?? 0
      if (got < need) missing.push(`${need - got} ${nameOf(id)}`)
    }
    if (missing.length === 0) { best = { r, times }; break }
    if (!bestMissing || missing.length < bestMissing.length) bestMissing = missing
  }
  if (!best) return fail(`cannot craft ${num} ${item}: missing ${bestMissing.join(', ')}`)
  let note = ''
  if (best.r.requiresTable) {
    const st = await needStation(side, 'crafting_table')
    if (st.error) return fail(`cannot craft ${item}: its recipe needs a 3×3 grid and ${st.error}`)
    if (st.placed) note = ' (placed a crafting_table first' + await takeBack(side, st, 'crafting_table') + ')'
  }
  for (const [id, n] of consumedBy(best.r)) takeItem(side, nameOf(id), n * best.times)
  const made = best.r.result.count * best.times
  giveItem(side, item, made)
  // what stays in the grid (the empty buckets of a cake)
  for (const [id, n] of leftBy(best.r)) giveItem(side, nameOf(id), n * best.times)
  await settleInventory(side)
  return ok(`crafted ${made} ${item}${note}`)
}

// ---------- smelt ----------

async function smelt (side, item, num) {
  item = plain(item)
  if (!Number.isInteger(num) || num < 1) return fail(`cannot smelt ${item}: the number must be a positive integer, not ${JSON.stringify(num)}`)
  const inputs = SMELTING[item]
  if (!inputs) return fail(`cannot smelt ${item}: no furnace recipe makes it`)
  const input = inputs.find(i => countOf(side, i) >= num)
  if (!input) return fail(`cannot smelt ${num} ${item}: it needs ${num} of ${inputs.join(' or ')}, and you have ${inputs.map(i => countOf(side, i)).reduce((a, b) => a + b, 0)}`)
  // fuel: the cheapest that covers it, never the input itself
  let fuelPlan = null
  for (const f of FUEL_ORDER) {
    const have = countOf(side, f) - (f === input ? num : 0)
    const need = Math.ceil(num / FUEL[f])
    if (have >= need) { fuelPlan = [f, need]; break }
  }
  if (!fuelPlan) return fail(`cannot smelt ${item}: no fuel (coal, charcoal, logs, planks, sticks...) for ${num} item(s)`)
  const st = await needStation(side, 'furnace')
  if (st.error) return fail(`cannot smelt ${item}: ${st.error}`)
  takeItem(side, input, num)
  takeItem(side, fuelPlan[0], fuelPlan[1])
  giveItem(side, item, num)
  const note = st.placed ? ' (placed a furnace first' + await takeBack(side, st, 'furnace') + ')' : ''
  await settleInventory(side)
  return ok(`smelted ${num} ${input} into ${num} ${item} with ${fuelPlan[1]} ${fuelPlan[0]}${note}`)
}

// ---------- equip, teleport ----------

async function equip (side, item) {
  item = plain(item)
  const reg = side.serv.registry
  if (!reg.itemsByName[item]) return fail(`cannot equip ${item}: no Minecraft item has that name`)
  const inv = side.player.inventory
  let slot = -1
  for (let s = 9; s <= 44; s++) if (inv.slots[s]?.name === item) { slot = s; if (s >= HOTBAR) break }
  if (slot < 0) return fail(`cannot equip ${item}: it is not in your inventory`)
  if (slot < HOTBAR) {
    // swap it into the held hotbar slot, as a player's number key does
    const target = HOTBAR + side.player.heldItemSlot
    const a = inv.slots[slot]
    const b = inv.slots[target]
    inv.updateSlot(target, a)
    inv.updateSlot(slot, b ?? null)
    await settleInventory(side)
    return ok(`equipped ${item}`)
  }
  await selectHotbar(side, slot - HOTBAR)
  return ok(`equipped ${item}`)
}

/** Move the body to `pos` on the server's word. The bot's physics is off meanwhile: a position packet it sent
 *  before hearing of the teleport would otherwise pull it back where it was. */
async function teleportBody (side, pos) {
  const bot = side.bot
  const physics = bot.physicsEnabled
  bot.physicsEnabled = false
  try {
    // both ends must agree: a stale position packet from the bot can also move the server's player back
    const arrived = () => bot.entity.position.distanceTo(pos) <= 0.5 && side.player.position.distanceTo(pos) <= 0.5
    for (let attempt = 0; attempt < 5 && !arrived(); attempt++) {
      await side.player.teleport(pos)
      const t0 = Date.now()
      while (bot.entity.position.distanceTo(pos) > 0.5 && Date.now() - t0 < 3000) await sleep(20)
      await sleep(100) // let a packet already on its way land before judging
    }
    if (!arrived()) throw new Error(`the body did not arrive at ${pos} (the client has it at ${bot.entity.position}, the server at ${side.player.position})`)
    bot.entity.velocity.set(0, 0, 0)
  } finally {
    bot.physicsEnabled = physics
  }
}

async function teleportToSpawn (side) {
  await teleportBody(side, side.episode.spawn)
  await side.ensureChunks()
  return ok('teleported to the spawn point')
}

// ---------- execute: the scripted stand-in for Steve-1 ----------

const MINE_VERBS = new Set(['milk', 'fill', 'scoop', 'mine', 'dig', 'chop', 'cut', 'collect', 'gather', 'get', 'obtain', 'break', 'harvest', 'pick', 'find', 'strip'])
const KILL_VERBS = new Set(['kill', 'hunt', 'attack', 'slay', 'fight', 'combat', 'shear'])

/** Which blocks and mobs yield `item` when dug or killed (minecraft-data's loot tables, plus the block itself). */
function sourcesOf (reg, item) {
  const blocks = new Set()
  for (const [name, loot] of Object.entries(reg.blockLoot)) {
    if (loot.drops.some(d => d.item === item && !d.silkTouch)) blocks.add(name)
  }
  if (reg.blocksByName[item] && (!reg.blockLoot[item] || blocks.has(item))) blocks.add(item)
  const mobs = new Set()
  for (const [name, loot] of Object.entries(reg.entityLoot)) {
    if (loot.drops.some(d => d.item === item)) mobs.add(name)
  }
  if (item === 'white_wool') mobs.add('sheep')
  if (item === 'wheat_seeds') blocks.add('grass')
  return { blocks: [...blocks], mobs: [...mobs] }
}

function parseSubgoal (prompt) {
  const words = String(prompt ?? '').toLowerCase().replace(/[^a-z0-9_ ]/g, ' ').split(/\s+/).filter(Boolean)
  if (words.length < 2 || words.length > 5) return null
  const verb = words[0]
  const object = words.slice(1).filter(w => !['a', 'an', 'the', 'some', 'more'].includes(w)).join('_')
  return { verb, object }
}

async function execute (side, prompt, goalItem, num, maxTicks) {
  const bot = side.bot
  const reg = side.serv.registry
  const goal = plain(goalItem)
  if (!reg.itemsByName[goal]) return fail(`execute: no Minecraft item is named ${JSON.stringify(goal)}`)
  if (!Number.isInteger(num) || num < 1) return fail(`execute: the number must be a positive integer, not ${JSON.stringify(num)}`)
  const sub = parseSubgoal(prompt)
  if (!sub) return fail(`execute: the prompt ${JSON.stringify(prompt)} is not a simple verb-object subgoal such as "mine iron_ore" or "kill cow"`)
  if (sub.verb === 'craft' || sub.verb === 'smelt') return fail(`execute cannot ${sub.verb}: use the ${sub.verb} action instead`)
  if (!MINE_VERBS.has(sub.verb) && !KILL_VERBS.has(sub.verb)) {
    return fail(`execute: the executor does not know the verb ${JSON.stringify(sub.verb)}; it can mine, chop, dig, collect, gather, harvest, kill, hunt or attack`)
  }
  const { blocks, mobs } = sourcesOf(reg, goal)
  // prefer the source the prompt names ("mine iron_ore", "kill cow", "chop tree" → any log)
  const named = (n) => sub.object.includes(n) || n.includes(sub.object)
  const wantMobs = KILL_VERBS.has(sub.verb) || (mobs.some(named) && !blocks.some(named))
  const blockIds = (blocks.filter(named).length ? blocks.filter(named) : blocks).map(n => reg.blocksByName[n]?.id).filter(id => id !== undefined)
  const mobNames = mobs.filter(named).length ? mobs.filter(named) : mobs
  const start = countOf(side, goal)
  const target = start + num
  const budgetTicks = maxTicks ?? DEFAULT_MAX_TICKS
  const deadline = Date.now() + budgetTicks * 50
  const timeLeft = () => deadline - Date.now()
  const got = () => countOf(side, goal) - start
  const report = (reason) => subgoalReport(side, prompt, goal, num, got(), reason)
  if (FILLS[goal]) return fillBucket(side, prompt, goal, num, budgetTicks)
  if (goal.startsWith('stripped_') && reg.blocksByName[goal.slice('stripped_'.length)]) {
    return stripLogs(side, prompt, goal, num, budgetTicks)
  }
  const looseGoal = () => bot.nearestEntity(e => e.name === 'item' && side.serv.entities[e.id] &&
    e.getDroppedItem?.()?.name === goal && e.position.distanceTo(bot.entity.position) < 48)
  if (!looseGoal()) {
    if (wantMobs && mobNames.length === 0) return fail(`execute: no mob drops ${goal}`)
    if (!wantMobs && blockIds.length === 0) return fail(`execute: no block yields ${goal} when mined, and none lies around`)
  }

  let lastError = ''
  let attempts = 0
  while (countOf(side, goal) < target && timeLeft() > 0 && attempts < 64) {
    attempts++
    try {
      const loose = looseGoal()
      if (loose) {
        // the goal item lies on the ground (an egg, a drop): walk over it
        await collectItemsNear(side, loose.position, timeLeft)
        continue
      }
      if (wantMobs) {
        const mob = bot.nearestEntity(e => mobNames.includes(e.name) && e.isValid !== false && side.serv.entities[e.id])
        if (!mob) return report(`no ${mobNames.join(' or ')} in sight`)
        await withTimeout(bot.pathfinder.goto(new goals.GoalNear(mob.position.x, mob.position.y, mob.position.z, 2)), timeLeft())
        await equipBestWeapon(side)
        while (side.serv.entities[mob.id] && timeLeft() > 0) {
          await bot.lookAt(mob.position.offset(0, 0.5, 0), true)
          bot.attack(mob)
          await sleep(650) // a sword's cooldown
        }
        await collectItemsNear(side, mob.position, timeLeft)
      } else {
        const block = bot.findBlock({ matching: blockIds, maxDistance: 64, count: 1 })
        if (!block) return report(`no ${blocks.join(' or ')} within 64 blocks`)
        const info = reg.blocksByName[block.name]
        if (info.harvestTools && !Object.keys(info.harvestTools).some(id => countOf(side, reg.items[id].name) > 0)) {
          const tools = Object.keys(info.harvestTools).map(id => reg.items[id].name)
          return report(`${block.name} drops nothing unless mined with ${tools.join(' or ')}, and none is in the inventory`)
        }
        await withTimeout(bot.collectBlock.collect(block, { ignoreNoPath: false }), timeLeft())
        await collectItemsNear(side, block.position.offset(0.5, 0, 0.5), timeLeft)
      }
    } catch (err) {
      lastError = err.message
      await stopEverything(bot)
      if (/timed out/.test(lastError)) break
    }
  }
  return finish(side, report, timeLeft() <= 0 ? `the step budget (${budgetTicks} ticks) ran out` : lastError)
}

/** An executor call's answer: reached when `got` more of the goal are held, else why not. */
function subgoalReport (side, prompt, goal, num, got, reason) {
  if (got >= num) return ok(`subgoal "${prompt}" reached: got ${got} ${goal} (now ${countOf(side, goal)})`, { got })
  return fail(`subgoal "${prompt}" not reached: got ${got} of ${num} ${goal}${reason ? '; ' + reason : ''}`, { got })
}

/** The end of an executor call: nothing left moving or digging, the inventory settled, then the answer. */
async function finish (side, report, reason) {
  await stopEverything(side.bot)
  await settleInventory(side)
  return report(reason)
}

/** Stripped logs: Minecraft makes one by using an axe on a log (a use-item flying-squid lacks), applied on the
 *  server once the body stands at the log with an axe in hand; the stripped block is then dug and collected. */
async function stripLogs (side, prompt, goal, num, budgetTicks) {
  const bot = side.bot
  const reg = side.serv.registry
  const source = goal.slice('stripped_'.length)
  const deadline = Date.now() + budgetTicks * 50
  const timeLeft = () => deadline - Date.now()
  const start = countOf(side, goal)
  const got = () => countOf(side, goal) - start
  let lastError = ''
  const report = (reason) => subgoalReport(side, prompt, goal, num, got(), reason)
  const axe = Object.keys(inventoryCounts(side)).find((n) => n.endsWith('_axe'))
  if (!axe) return report(`stripping ${source} needs an axe in the inventory`)
  for (let tries = 0; got() < num && timeLeft() > 0 && tries < 32; tries++) {
    const log = bot.findBlock({ matching: reg.blocksByName[source].id, maxDistance: 64 })
    if (!log) return report(`no ${source} within 64 blocks`)
    try {
      await withTimeout(bot.pathfinder.goto(new goals.GoalNear(log.position.x, log.position.y, log.position.z, 3)), timeLeft())
      await equip(side, axe)
      await side.serv.setBlock(side.serv.overworld, log.position, reg.blocksByName[goal].defaultState)
      const t0 = Date.now()
      while (bot.blockAt(log.position)?.name !== goal && Date.now() - t0 < 2000) await sleep(20)
      await withTimeout(bot.collectBlock.collect(bot.blockAt(log.position), { ignoreNoPath: false }), timeLeft())
      await collectItemsNear(side, log.position.offset(0.5, 0, 0.5), timeLeft)
    } catch (err) {
      lastError = err.message
      await stopEverything(bot)
      if (/timed out/.test(lastError)) break
    }
  }
  return finish(side, report, timeLeft() <= 0 ? `the step budget (${budgetTicks} ticks) ran out` : lastError)
}

/** Buckets filled by using an empty one on a cow or a water source (Minecraft's use-item on them, which
 *  flying-squid lacks): applied on the server once the body stands next to the source. */
const FILLS = {
  milk_bucket: { mob: 'cow' },
  water_bucket: { block: 'water' }
}

async function fillBucket (side, prompt, goal, num, budgetTicks) {
  const bot = side.bot
  const reg = side.serv.registry
  const deadline = Date.now() + budgetTicks * 50
  let got = 0
  const report = (reason) => subgoalReport(side, prompt, goal, num, got, reason)
  while (got < num) {
    if (countOf(side, 'bucket') < 1) return report('it needs an empty bucket in the inventory')
    if (Date.now() > deadline) return report(`the step budget (${budgetTicks} ticks) ran out`)
    const { mob, block } = FILLS[goal]
    let at
    if (mob) {
      const e = bot.nearestEntity(x => x.name === mob && side.serv.entities[x.id])
      if (!e) return report(`no ${mob} in sight`)
      at = e.position
    } else {
      const b = bot.findBlock({ matching: reg.blocksByName[block].id, maxDistance: 64, useExtraInfo: (x) => x.metadata === 0 })
      if (!b) return report(`no ${block} source within 64 blocks`)
      at = b.position
    }
    try {
      await withTimeout(bot.pathfinder.goto(new goals.GoalNear(at.x, at.y, at.z, 2)), deadline - Date.now())
    } catch (err) {
      await stopEverything(bot)
      return report(err.message)
    }
    await bot.lookAt(at.offset(0.5, 0.5, 0.5), true)
    takeItem(side, 'bucket', 1)
    giveItem(side, goal, 1)
    // a water source stays: the world's waters are pools, which refill in Minecraft
    got++
  }
  await settleInventory(side)
  return report('')
}

/** A budget that ran out leaves collectblock, the pathfinder or a dig going: stop them all, so that the
 *  next call starts from rest. */
async function stopEverything (bot) {
  bot.pathfinder.stop()
  bot.pathfinder.setGoal(null)
  try { bot.stopDigging() } catch (err) {}
  bot.clearControlStates()
  try {
    await withTimeout(bot.collectBlock.cancelTask(), CANCEL_MS)
  } catch (err) {
    // collectblock waits without end for a drop it walked to to be picked up, which one out of reach never
    // is, and its cancelTask waits on that loop: the sidecar hung there (a dead execute, then every request
    // behind it). The loop is let go: its targets emptied, the drops it waits on declared gone, so it ends.
    const stuck = [...bot.collectBlock.targets.targets]
    bot.collectBlock.targets.clear()
    for (const target of stuck) if (target.constructor.name === 'Entity') bot.emit('entityGone', target)
  }
}

/** How long a cancelled collection may take to wind down: a dig in progress (obsidian takes 9.4 s with a diamond
 *  pickaxe) and a last pickup. */
const CANCEL_MS = 12000

async function equipBestWeapon (side) {
  const order = ['netherite_sword', 'diamond_sword', 'iron_sword', 'stone_sword', 'golden_sword', 'wooden_sword',
    'diamond_axe', 'iron_axe', 'stone_axe', 'wooden_axe']
  const have = order.find(n => countOf(side, n) > 0)
  if (have && heldName(side) !== have) await equip(side, have)
}

/** Walk over the item entities near `pos` so the server hands them over. */
async function collectItemsNear (side, pos, timeLeft) {
  const bot = side.bot
  const t0 = Date.now()
  while (Date.now() - t0 < 4000 && timeLeft() > 0) {
    const drop = bot.nearestEntity(e => e.name === 'item' && e.position.distanceTo(pos) < 6 && side.serv.entities[e.id])
    if (!drop) break
    try {
      await withTimeout(bot.pathfinder.goto(new goals.GoalBlock(Math.floor(drop.position.x), Math.floor(drop.position.y), Math.floor(drop.position.z))), Math.min(5000, timeLeft()))
    } catch (err) {
      break
    }
    await sleep(300)
  }
}

function withTimeout (promise, ms) {
  let timer
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((resolve, reject) => { timer = setTimeout(() => reject(new Error('timed out')), Math.max(ms, 0)) })
  ])
}

module.exports = {
  load,
  inventoryCounts,
  countOf,
  heldName,
  giveItem,
  takeItem,
  clearInventory,
  settleInventory,
  selectHotbar,
  craft,
  smelt,
  equip,
  teleportToSpawn,
  teleportBody,
  execute,
  sourcesOf,
  parseSubgoal,
  Vec3
}
