'use strict'
/**
 * A small world to develop and test the first-person view against (tests/test_minecraft_view.py),
 * apart from the pack's real sidecar: a flying-squid 1.16.5 server on loopback with a superflat
 * world, a wall of coloured wool and a tree to the bot's north, a mineflayer bot standing at a fixed
 * spawn, and startView() on it.
 *
 *   node view_demo.js [--port N] [--view-port N] [--width 640] [--height 360]
 *
 * Prints one JSON line once the view is served: {"view": URL, "server_port": N, "pose": {...}}.
 * Then reads commands on stdin, one a line, and answers each with one JSON line:
 *   look YAW PITCH   turn the bot (radians, mineflayer's convention) -> {"ok": true, "pose": {...}}
 *   place X Y Z NAME set a block on the server, answered once the bot has seen it -> {"ok": true}
 *   pose             -> {"ok": true, "pose": {...}}
 *   quit             stop everything and exit
 * It exits when stdin closes, so it cannot outlive the process that started it.
 */

const { once } = require('events')
const readline = require('readline')
const { Vec3 } = require('vec3')
const squid = require('flying-squid')
const mineflayer = require('mineflayer')
const { startView } = require('./view')

const VERSION = '1.16.5'
const GROUND_Y = 5 // superflat: bedrock at 0, dirt 1-3, grass at 4; the bot stands on it
const SPAWN = new Vec3(8.5, GROUND_Y, 8.5)
const WOOL = ['white_wool', 'orange_wool', 'magenta_wool', 'light_blue_wool', 'yellow_wool', 'lime_wool',
  'pink_wool', 'gray_wool', 'red_wool', 'blue_wool', 'green_wool', 'black_wool']

/**
 * flying-squid's log plugin opens a server console on process.stdin/stdout when the server's
 * plugins are loaded: every stdin line would run as a server command, and its "> " prompts and
 * cursor moves would land in our JSON lines. Creating the server while stdin/stdout are stand-ins
 * gives that console streams nobody uses; its log then goes to stderr.
 */
function createServerWithoutConsole (options) {
  const { PassThrough } = require('stream')
  const saved = ['stdin', 'stdout'].map(key => [key, Object.getOwnPropertyDescriptor(process, key)])
  for (const [key] of saved) Object.defineProperty(process, key, { configurable: true, enumerable: true, value: new PassThrough() })
  try {
    const serv = squid.createMCServer(options)
    serv.log = (message) => process.stderr.write(`flying-squid: ${message}\n`)
    return serv
  } finally {
    for (const [key, descriptor] of saved) Object.defineProperty(process, key, descriptor)
  }
}

function parseArgs (argv) {
  const args = { port: 0, viewPort: 0, width: 640, height: 360 }
  const names = { '--port': 'port', '--view-port': 'viewPort', '--width': 'width', '--height': 'height' }
  for (let i = 0; i < argv.length; i += 2) {
    const key = names[argv[i]]
    const value = Number(argv[i + 1])
    if (!key || !Number.isInteger(value) || value < 0) {
      throw new Error(`view_demo.js: bad argument ${argv[i]} ${argv[i + 1]}; allowed: ${Object.keys(names).join(', ')} with an integer`)
    }
    args[key] = value
  }
  return args
}

async function placeScenery (serv) {
  const { blocksByName } = serv.registry
  const world = serv.overworld
  const set = (x, y, z, name) => world.setBlockStateId(new Vec3(x, y, z), blocksByName[name].defaultState)
  // a wool wall 5 blocks north of the spawn, 12 wide and 3 high, each column its own colour
  for (let i = 0; i < WOOL.length; i++) {
    for (let y = GROUND_Y; y < GROUND_Y + 3; y++) await set(2 + i, y, 3, WOOL[(i + y) % WOOL.length])
  }
  // an oak tree to the north-east, in front of the wall
  for (let y = GROUND_Y; y < GROUND_Y + 4; y++) await set(13, y, 5, 'oak_log')
  for (let dx = -2; dx <= 2; dx++) {
    for (let dz = -2; dz <= 2; dz++) {
      for (let y = GROUND_Y + 3; y < GROUND_Y + 6; y++) {
        const corner = Math.abs(dx) === 2 && Math.abs(dz) === 2
        if ((dx !== 0 || dz !== 0 || y >= GROUND_Y + 4) && !corner) await set(13 + dx, y, 5 + dz, 'oak_leaves')
      }
    }
  }
}

async function place (serv, bot, pos, name) {
  const block = serv.registry.blocksByName[name]
  if (!block) throw new Error(`place: no block named ${name} in Minecraft ${VERSION}`)
  const seen = new Promise((resolve) => {
    const listener = (before, after) => {
      if (after.position.equals(pos) && after.stateId === block.defaultState) {
        bot.removeListener('blockUpdate', listener)
        resolve()
      }
    }
    bot.on('blockUpdate', listener)
  })
  await serv.setBlock(serv.overworld, pos, block.defaultState)
  await seen
}

function pose (bot) {
  const { position, yaw, pitch } = bot.entity
  return { x: position.x, y: position.y, z: position.z, yaw, pitch }
}

async function main () {
  const args = parseArgs(process.argv.slice(2))
  const serv = createServerWithoutConsole({
    port: args.port,
    host: '127.0.0.1',
    'online-mode': false,
    logging: false,
    noConsoleOutput: true,
    gameMode: 1,
    difficulty: 0,
    'max-players': 1,
    'view-distance': 4,
    kickTimeout: 60000,
    plugins: {},
    modpe: false,
    'player-list-text': { header: { text: '' }, footer: { text: '' } },
    'everybody-op': true,
    'max-entities': 10,
    version: VERSION,
    generation: { name: 'superflat', options: { seed: 1 } }
  })
  const [serverPort] = await once(serv, 'listening')
  await serv.waitForReady(10000)
  serv.getSpawnPoint = async () => SPAWN.clone()
  await placeScenery(serv)

  const bot = mineflayer.createBot({ host: '127.0.0.1', port: serverPort, username: 'agent', version: VERSION, auth: 'offline' })
  let lastTeleport = Date.now()
  bot._client.on('position', () => { lastTeleport = Date.now() })
  await once(bot, 'spawn')
  await bot.waitForChunksToLoad()
  // flying-squid sends the spawn position twice, the second some 200 ms after the bot spawned, and
  // each resets the bot's look (to the south): turn it only once the server is done placing it
  const settled = Date.now() + 5000
  while (Date.now() - lastTeleport < 1000 && Date.now() < settled) await new Promise(resolve => setTimeout(resolve, 50))
  bot.physicsEnabled = false // nothing moves the bot but the commands below: a fixed pose
  bot.entity.position = SPAWN.clone()
  await bot.look(0, 0, true)
  const view = await startView(bot, { port: args.viewPort, width: args.width, height: args.height })
  process.stdout.write(JSON.stringify({ view: view.url, server_port: serverPort, pose: pose(bot) }) + '\n')

  let stopping = false
  async function stop () {
    if (stopping) return
    stopping = true
    await view.close()
    bot.quit()
    await serv.destroy().catch(() => {})
    process.exit(0)
  }

  const lines = readline.createInterface({ input: process.stdin })
  lines.on('close', stop)
  for await (const line of lines) {
    const [command, ...rest] = line.trim().split(/\s+/)
    try {
      if (command === 'look' && rest.length === 2 && rest.every(v => Number.isFinite(Number(v)))) {
        await bot.look(Number(rest[0]), Number(rest[1]), true)
        process.stdout.write(JSON.stringify({ ok: true, pose: pose(bot) }) + '\n')
      } else if (command === 'place' && rest.length === 4 && rest.slice(0, 3).every(v => Number.isInteger(Number(v)))) {
        await place(serv, bot, new Vec3(Number(rest[0]), Number(rest[1]), Number(rest[2])), rest[3])
        process.stdout.write(JSON.stringify({ ok: true }) + '\n')
      } else if (command === 'pose') {
        process.stdout.write(JSON.stringify({ ok: true, pose: pose(bot) }) + '\n')
      } else if (command === 'quit') {
        break
      } else {
        process.stdout.write(JSON.stringify({ ok: false, error: `unknown command ${JSON.stringify(line)}; allowed: look YAW PITCH, place X Y Z NAME, pose, quit` }) + '\n')
      }
    } catch (err) {
      process.stdout.write(JSON.stringify({ ok: false, error: String(err) }) + '\n')
    }
  }
  await stop()
}

main().catch((err) => {
  process.stderr.write(`view_demo.js: ${err && err.stack ? err.stack : err}\n`)
  process.exit(1)
})
