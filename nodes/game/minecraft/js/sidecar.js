'use strict'
/**
 * The Minecraft side of framebus's VAB-Minecraft environment: `node sidecar.js --port P`.
 *
 * One process holds a flying-squid server (Minecraft 1.16.5, offline mode, on 127.0.0.1:P only) and the
 * mineflayer bot that is the agent's body, and answers JSON lines on stdin with JSON lines on stdout:
 *   request  {"id": N, "op": "...", "args": {...}}
 *   reply    {"id": N, "ok": true, "result": ...}   or   {"id": N, "ok": false, "error": "..."}
 * Requests are served one at a time, in order. Logs, flying-squid's included, go to stderr, so stdout
 * carries nothing but replies. The first line on stdout is {"id": 0, "ok": true, "result": {"ready": ...}}
 * once the bot has spawned, or an error reply if the server or bot could not start.
 *
 * The ops (every action's result is {success, message, ...}: a refused action is an ordinary reply, ok=false
 * is kept for requests that cannot be served: an unknown op or task, bad arguments, no episode yet):
 *   reset {task, seed=0}        a fresh region for VAB's task (by name, from data/minecraft_tasks_v1.3.json) and
 *                               seed; inventory cleared and the task's init_inventory given; its mobs and items
 *                               spawned → observe's result + {reset_s}
 *   observe {}                  {inventory: {name: count} over the 36 slots, equipped: name or "none",
 *                               position: {x, y, z} with x and z relative to the episode's origin, pitch and yaw in
 *                               VAB's degrees (pitch > 0 looks down; yaw 0 north, 90 east, 180 south, 270 west),
 *                               tick: the server's tick count (it moves only during ops), task, seed}
 *   give {item, count=1}        items into the inventory (tests, debugging) → observe's result
 *   blocks {radius=8, y0=1, y1=90}  every block in the (2r+1)² columns around spawn → {digest (sha256 of the
 *                               state ids), counts: {block name: n}, radius, y0, y1}
 *   craft {item, num=1}         Minecraft's recipe; a crafting table in reach or placed from the inventory for 3×3
 *   smelt {item, num=1}         item is the output (iron_ingot); a furnace in reach or placed, fuel from the inventory
 *   equip {item}                into the main hand
 *   teleport_to_spawn {}        back to the episode's spawn
 *   execute {prompt, goal_item, num=1, max_ticks=1200}  the scripted executor (actions.js) → also {got}
 *   view {port=0, width=640, height=360}  start (once) the first-person view of the body (view.js) on loopback
 *                               → {url, port}
 *   close {}                    quit the bot and the server, then exit → {closed: true}
 *
 * Lockstep: between requests the server's tick loop is stopped and the bot's physics is off, so nothing in
 * the world moves while the model thinks; every op that acts runs the world for its duration (see
 * `running`). flying-squid's mobs have no AI, so a paused tick loop freezes them entirely.
 */

// stdin and stdout are the protocol's. flying-squid opens its own console on process.stdin (it would eat our
// requests) and writes its prompt and logs to process.stdout: it gets a stdin that never speaks and stderr.
const { PassThrough } = require('stream')
const protocolIn = process.stdin
const protocolOut = process.stdout.write.bind(process.stdout)
Object.defineProperty(process, 'stdin', { value: new PassThrough(), configurable: true })
Object.defineProperty(process, 'stdout', { value: process.stderr, configurable: true })
console.log = (...a) => console.error(...a)
console.info = console.log

const path = require('path')
const fs = require('fs')
const readline = require('readline')
const mcServer = require('flying-squid')
const mineflayer = require('mineflayer')
const { Vec3 } = require('vec3')
const world = require('./world')
const { LAYOUT } = require('./init_layout')
const { seeded } = require('./plugins/rng')
const actions = require('./actions')

const VERSION = '1.16.5'
const TASKS_FILE = path.join(__dirname, '..', 'data', 'minecraft_tasks_v1.3.json')
const USERNAME = 'agent'

function argValue (name, fallback) {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : fallback
}

/** The world and the body, and what an episode needs to know about them. */
class Sidecar {
  constructor (port, viewDistance) {
    this.port = port
    this.viewDistance = viewDistance
    this.view = null // the first-person view, once asked for (op view)
    this.regions = new Map()
    this.nextRegion = 1
    this.episode = null // {task, seed, region, spawn}
    this.tasks = null
  }

  async start () {
    const t0 = Date.now()
    // region 0 is the lobby the body first spawns in, before any reset
    this.regions.set(0, new world.Region(0, '__lobby__', 0, 'plains', []))
    const lobby = this.regions.get(0)
    this.serv = mcServer.createMCServer({
      port: this.port,
      host: '127.0.0.1',
      'online-mode': false,
      version: VERSION,
      logging: false,
      gameMode: 0,
      difficulty: 0,
      motd: 'framebus VAB-Minecraft',
      'max-players': 2,
      'max-entities': 200,
      'view-distance': this.viewDistance,
      kickTimeout: 3600 * 1000,
      'everybody-op': true,
      'player-list-text': { header: { text: 'framebus' }, footer: { text: 'VAB-Minecraft' } },
      generation: { name: path.join(__dirname, 'world.js'), options: { regions: this.regions, seed: 1 } },
      plugins: Object.fromEntries(['drops', 'mobs'].map(p => [path.join(__dirname, 'plugins', p + '.js'), {}]))
    })
    const serv = this.serv
    const spawn = this.spawnOf(lobby)
    serv.getSpawnPoint = async () => spawn.floored()
    await new Promise((resolve, reject) => {
      serv.once('listening', resolve)
      serv.once('error', reject)
    })
    serv.doDaylightCycle = false
    serv.setTime?.(6000) // noon: a bright first-person view
    this.serverStartS = (Date.now() - t0) / 1000

    const t1 = Date.now()
    this.bot = mineflayer.createBot({ host: '127.0.0.1', port: this.port, username: USERNAME, version: VERSION, auth: 'offline', hideErrors: false, viewDistance: 'tiny' })
    let positions = 0
    this.bot._client.on('position', () => { positions++ })
    this.bot.on('kicked', (reason) => console.error('bot kicked:', reason))
    this.bot.on('error', (err) => console.error('bot error:', err))
    await new Promise((resolve, reject) => {
      this.bot.once('spawn', resolve)
      this.bot.once('end', () => reject(new Error('the bot was disconnected before it spawned')))
      setTimeout(() => reject(new Error('the bot did not spawn within 30 s')), 30000)
    })
    this.player = serv.players.find(p => p.username === USERNAME)
    actions.load(this.bot)
    // flying-squid ends a login by sending the login position once more, after the client's first move: wait
    // for it here, or it would pull the body back from the first episode's spawn
    await this.bot.look(0, 0, true)
    await waitFor(() => positions >= 2, 10000, "the server's second position packet at login")
    await this.bot.waitForChunksToLoad()
    this.botSpawnS = (Date.now() - t1) / 1000
    this.pause()
    return { ready: true, version: VERSION, port: this.port, server_start_s: this.serverStartS, bot_spawn_s: this.botSpawnS }
  }

  /** The world stands still: no server tick (entities, items, day), no client physics. */
  pause () {
    this.serv.stopTickInterval()
    this.bot.physicsEnabled = false
  }

  resume () {
    this.serv.setTickInterval(20)
    this.bot.physicsEnabled = true
  }

  /** Run `fn` with the world moving, and stop it again whatever happens. */
  async running (fn) {
    this.resume()
    try {
      return await fn()
    } finally {
      this.pause()
    }
  }

  /** The chunks around the body, on the client. flying-squid sends them on a move, from a promise chain that
   *  stops at its first failure and can race a second send; so wait for it, then send what is still missing. */
  async ensureChunks () {
    const bot = this.bot
    const player = this.player
    await player.worldSendRestOfChunks().catch((err) => console.error('chunk send:', err.message))
    await waitFor(() => !player.sendingChunks, 15000, 'flying-squid to send the chunks')
    const near = Math.min(2, this.viewDistance)
    const cx0 = Math.floor(bot.entity.position.x / 16)
    const cz0 = Math.floor(bot.entity.position.z / 16)
    const missing = () => {
      const out = []
      for (let dx = -near; dx <= near; dx++) {
        for (let dz = -near; dz <= near; dz++) {
          if (!bot.world.getColumn(cx0 + dx, cz0 + dz)) out.push([cx0 + dx, cz0 + dz])
        }
      }
      return out
    }
    for (let attempt = 0; attempt < 3 && missing().length; attempt++) {
      if (attempt > 0) console.error(`resending ${missing().length} chunks`)
      for (const [cx, cz] of missing()) {
        player.loadedChunks[`${cx},${cz}`] = 1
        await player.sendChunk(cx, cz, await this.serv.overworld.getColumn(cx, cz))
      }
      const t0 = Date.now()
      while (missing().length && Date.now() - t0 < 3000) await new Promise(resolve => setTimeout(resolve, 20))
    }
    if (missing().length) throw new Error(`the client did not get ${missing().length} chunks around spawn`)
  }

  spawnOf (region) {
    const h = region.height(0, 0)
    return new Vec3(region.origin.x + 0.5, h + 1, region.origin.z + 0.5)
  }

  loadTasks () {
    if (!this.tasks) {
      this.tasks = new Map(JSON.parse(fs.readFileSync(TASKS_FILE, 'utf8')).map(t => [t.task, t]))
    }
    return this.tasks
  }

  /** A fresh region for (task, seed), the body moved there with the task's inventory, mobs spawned. */
  async reset ({ task, seed = 0 }) {
    const tasks = this.loadTasks()
    if (typeof task !== 'string' || !tasks.has(task)) {
      throw new Error(`reset: unknown task ${JSON.stringify(task)}; the tasks are those of ${path.basename(TASKS_FILE)} (e.g. ${[...tasks.keys()].slice(0, 4).join(', ')})`)
    }
    if (!Number.isInteger(seed)) throw new Error(`reset: seed must be an integer, not ${JSON.stringify(seed)}`)
    const spec = tasks.get(task)
    const t0 = Date.now()
    const serv = this.serv
    const old = this.episode
    const index = this.nextRegion++
    const region = new world.Region(index, task, seed, spec.env.biome, spec.init_command ?? [])
    this.regions.set(index, region)
    const spawn = this.spawnOf(region)
    serv.dropsRng = seeded(region.key)

    // what the last episode left: its mobs and items, its inventory
    for (const e of Object.values(serv.entities)) {
      if (e.type !== 'player') serv.destroyEntity(e)
    }
    actions.clearInventory(this)
    this.episode = null
    await this.running(async () => {
      this.episode = { task, seed, region, spawn, spec }
      // level, and facing south (+z) once there, towards the task's field, as MineRL's player faces it at spawn
      // (the teleport packet carries the server's idea of the head's angles)
      this.player.yaw = 0
      this.player.pitch = 0
      await actions.teleportBody(this, spawn)
      this.player.spawnPoint = spawn.floored()
      await this.ensureChunks()
      await this.bot.look(Math.PI, 0, true)
      for (const [name, count] of Object.entries(spec.env.init_inventory ?? {})) {
        actions.giveItem(this, name.replace(/^minecraft:/, ''), count)
      }
      this.spawnInitEntities(spec.init_command ?? [], region, spawn)
      // the body must have seen them before the first action looks for them
      const seen = () => Object.values(serv.entities).every(e => e.type === 'player' || this.bot.entities[e.id])
      await waitFor(seen, 5000, 'the body to see the spawned mobs and items').catch((err) => console.error(err.message))
      await actions.selectHotbar(this, 0)
      await actions.settleInventory(this)
    })
    // the last region's chunks are freed by flying-squid itself once no player is near them
    if (old) this.regions.delete(old.region.index)
    return { ...this.observe(), reset_s: (Date.now() - t0) / 1000 }
  }

  /** The task's mobs and items in VAB's lines near spawn (init_layout.js); with mobs comes VAB's strength
   *  effect, so that one hit kills. Blocks and plants are the generator's (world.js). */
  spawnInitEntities (names, region, spawn) {
    const serv = this.serv
    const reg = serv.registry
    serv.vabStrength = false
    for (const name of names) {
      const layout = LAYOUT[name]
      if (!layout) continue
      const at = (x, z) => new Vec3(region.origin.x + x + 0.5, region.height(x, z) + 1, region.origin.z + z + 0.5)
      if (layout.mobs) {
        serv.vabStrength = true
        for (const z of layout.mobs.z) serv.spawnMob(reg.entitiesByName[layout.mobs.name].id, serv.overworld, at(layout.mobs.x, z), {})
      }
      for (const it of layout.items ?? []) {
        for (const z of it.z) serv.dropItems(serv.overworld, at(it.x, z), [[it.item, it.count]])
      }
    }
  }

  /** Position relative to the episode's origin (so the same task and seed read the same), VAB's angles. */
  observe () {
    const bot = this.bot
    const origin = this.episode?.region.origin ?? { x: 0, z: 0 }
    const p = bot.entity.position
    return {
      inventory: actions.inventoryCounts(this),
      equipped: actions.heldName(this),
      position: { x: round2(p.x - origin.x), y: round2(p.y), z: round2(p.z - origin.z) },
      ...vabAngles(bot.entity.yaw, bot.entity.pitch),
      tick: this.serv.tickCount,
      task: this.episode?.task ?? null,
      seed: this.episode?.seed ?? null
    }
  }

  /** Every block in a (2r+1)² column around spawn, y from y0 to y1: counts by name and a digest to compare. */
  async blocks ({ radius = 8, y0 = 1, y1 = 90 } = {}) {
    if (!this.episode) throw new Error('blocks: no episode yet; call reset first')
    const { origin } = this.episode.region
    const names = []
    const counts = {}
    for (let x = -radius; x <= radius; x++) {
      for (let z = -radius; z <= radius; z++) {
        for (let y = y0; y <= y1; y++) {
          const b = await this.serv.overworld.getBlock(new Vec3(origin.x + x, y, origin.z + z))
          names.push(b.stateId)
          counts[b.name] = (counts[b.name] ?? 0) + 1
        }
      }
    }
    const digest = require('crypto').createHash('sha256').update(names.join(',')).digest('hex')
    return { radius, y0, y1, digest, counts }
  }
}

/** mineflayer: yaw in radians, 0 = north, counter-clockwise; pitch in radians, positive = up.
 *  VAB: yaw in degrees, 0 = north, 90 = east (clockwise); pitch in degrees, positive = looking down. */
function vabAngles (yaw, pitch) {
  const deg = 180 / Math.PI
  let y = (-yaw * deg) % 360
  if (y < 0) y += 360
  return { yaw: round2(y) % 360, pitch: round2(-pitch * deg) + 0 }
}

const round2 = (v) => Math.round(v * 100) / 100

async function waitFor (cond, ms, what) {
  const t0 = Date.now()
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out after ${ms / 1000} s waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

async function main () {
  const port = Number(argValue('--port', '0'))
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    protocolOut(JSON.stringify({ id: 0, ok: false, error: `--port must be a TCP port (1-65535), not ${argValue('--port')}` }) + '\n')
    process.exit(2)
  }
  const side = new Sidecar(port, Number(argValue('--view-distance', '4')))
  try {
    protocolOut(JSON.stringify({ id: 0, ok: true, result: await side.start() }) + '\n')
  } catch (err) {
    protocolOut(JSON.stringify({ id: 0, ok: false, error: `the sidecar could not start: ${err.message}` }) + '\n')
    process.exit(1)
  }
  const ops = {
    reset: (a) => side.reset(a),
    observe: () => side.observe(),
    give: (a) => side.running(async () => { actions.giveItem(side, a.item, a.count ?? 1); await actions.settleInventory(side); return side.observe() }),
    blocks: (a) => side.blocks(a),
    craft: (a) => side.running(() => actions.craft(side, a.item, a.num ?? 1)),
    smelt: (a) => side.running(() => actions.smelt(side, a.item, a.num ?? 1)),
    equip: (a) => side.running(() => actions.equip(side, a.item)),
    teleport_to_spawn: () => side.running(() => actions.teleportToSpawn(side)),
    execute: (a) => side.running(() => actions.execute(side, a.prompt, a.goal_item, a.num ?? 1, a.max_ticks)),
    // the first-person view (view.js), served on loopback for the env node's headless Chromium
    view: async (a) => {
      if (!side.view) side.view = await require('./view').startView(side.bot, { port: a.port ?? 0, width: a.width ?? 640, height: a.height ?? 360, viewDistance: side.viewDistance })
      return { url: side.view.url, port: side.view.port }
    },
    close: async () => { setTimeout(() => process.exit(0), 50); await side.view?.close().catch(() => {}); side.bot.quit(); await side.serv.quit?.(); return { closed: true } }
  }
  const rl = readline.createInterface({ input: protocolIn })
  // one request at a time, in order: an op may take seconds and the world must not be shared
  let chain = Promise.resolve()
  rl.on('line', (line) => {
    chain = chain.then(async () => {
      let req
      try {
        req = JSON.parse(line)
      } catch (err) {
        protocolOut(JSON.stringify({ id: null, ok: false, error: `not a JSON request line: ${line.slice(0, 200)}` }) + '\n')
        return
      }
      const op = ops[req.op]
      if (!op) {
        protocolOut(JSON.stringify({ id: req.id, ok: false, error: `unknown op ${JSON.stringify(req.op)}; the ops are ${Object.keys(ops).join(', ')}` }) + '\n')
        return
      }
      if (side.episode === null && !['reset', 'close', 'observe', 'view'].includes(req.op)) {
        protocolOut(JSON.stringify({ id: req.id, ok: false, error: `${req.op}: no episode yet; call reset first` }) + '\n')
        return
      }
      try {
        const result = await op(req.args ?? {})
        protocolOut(JSON.stringify({ id: req.id, ok: true, result }) + '\n')
      } catch (err) {
        console.error(err)
        protocolOut(JSON.stringify({ id: req.id, ok: false, error: err.message }) + '\n')
      }
    })
  })
  // the parent closed our stdin: it is gone or done with us
  rl.on('close', () => chain.then(() => process.exit(0)))
}

if (require.main === module) main()

module.exports = { Sidecar, vabAngles, waitFor }
