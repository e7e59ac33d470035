'use strict'
/**
 * The agent's first-person view: prismarine-viewer's three.js page, served on loopback for a
 * headless Chromium to screenshot (nodes/game/minecraft/view.py).
 *
 * Why not prismarine-viewer's own `mineflayer(bot, {firstPerson: true})`: its HTTP server listens
 * on every interface (`http.listen(port)`, no host), and a replica's view must not be reachable
 * from the network. The server here is the same thing on 127.0.0.1: prismarine-viewer's static
 * page and its WorldView (which streams the bot's chunks, block updates and entities over
 * socket.io), plus what a screenshot needs to be taken at the right moment:
 *
 * - `/` is our own page: prismarine-viewer's client bundle, preceded by view_page.js, which watches
 *   the page from outside the bundle (its meshing workers, texture loads, renders) and answers
 *   `framebusView.waitDrawn()`.
 * - `/framebus/sync` brings the view up to date with the bot now (chunks around its position
 *   loaded, its pose sent) and answers what the page must have received for that: how many
 *   chunk columns and block updates were sent, and the pose the camera must show. Counts, not
 *   the order of arrival, because this answer and the socket's messages travel on different
 *   connections.
 *
 * One page per bot: a page that connects replaces the previous one (the counts are per page).
 */

const http = require('http')
const path = require('path')
const { createRequire } = require('module')

const VIEWER_ROOT = path.dirname(require.resolve('prismarine-viewer/package.json'))
// express and socket.io are prismarine-viewer's own dependencies: resolve them from it, so that
// this file uses exactly the versions its static page was built against
const viewerRequire = createRequire(path.join(VIEWER_ROOT, 'package.json'))
const express = viewerRequire('express')
const { Server: SocketServer } = viewerRequire('socket.io')
const { WorldView } = require('prismarine-viewer/viewer/lib/worldView')

const PAGE_SCRIPT = path.join(__dirname, 'view_page.js')
const WORKER_SCRIPT = path.join(__dirname, 'view_worker.js')
const COUNTED = ['loadChunk', 'unloadChunk', 'blockUpdate']

function pageHtml (width, height) {
  return `<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>framebus: first-person view</title>
<style>html, body { margin: 0; padding: 0; overflow: hidden; width: ${width}px; height: ${height}px; }
canvas { display: block; }</style>
<script>window.framebusViewSize = { width: ${width}, height: ${height} }</script>
<script src="framebus/view_page.js"></script>
</head>
<body><script src="index.js"></script></body>
</html>
`
}

/**
 * Serve the first-person view of `bot` on http://127.0.0.1:port/ (port 0: any free port).
 * `width` x `height` is the size the page expects its window to be: the page reports a window of
 * another size as not drawn, rather than let a frame of the wrong size through.
 * Resolves once listening, to `{ url, port, close() }`.
 */
async function startView (bot, { port = 0, width = 640, height = 360, viewDistance = 4 } = {}) {
  if (!bot || !bot.entity) throw new Error('startView: the bot has not spawned yet (call it after the bot\'s "spawn" event)')
  for (const [key, value] of Object.entries({ width, height, viewDistance })) {
    if (!Number.isInteger(value) || value <= 0) throw new Error(`startView: ${key} must be a positive integer, got ${value}`)
  }

  const app = express()
  const server = http.createServer(app)
  const io = new SocketServer(server, { path: '/socket.io', serveClient: false })
  let page = null // { socket, view, counts, queue, error }

  const html = pageHtml(width, height)
  app.get(['/', '/index.html'], (req, res) => res.type('html').send(html))
  app.get('/framebus/view_page.js', (req, res) => res.sendFile(PAGE_SCRIPT))
  app.get('/framebus/view_worker.js', (req, res) => res.sendFile(WORKER_SCRIPT))
  app.get('/favicon.ico', (req, res) => res.status(204).end()) // else a 404 in every page's console
  app.get('/framebus/sync', async (req, res) => {
    if (!page) return res.status(409).json({ error: 'no view page is connected' })
    try {
      res.json(await sync(page))
    } catch (err) {
      res.status(500).json({ error: String(err && err.stack ? err.stack : err) })
    }
  })
  app.use('/', express.static(path.join(VIEWER_ROOT, 'public')))

  function pose () {
    const { position, yaw, pitch } = bot.entity
    return { x: position.x, y: position.y, z: position.z, yaw, pitch }
  }

  function sendPose (current) {
    const { position, yaw, pitch } = bot.entity
    current.socket.emit('position', { pos: position, yaw, pitch, addMesh: true })
  }

  // WorldView's updatePosition returns early while an earlier call is still streaming chunks; one
  // queue per page makes "awaited the queue" mean "every chunk asked for so far was sent"
  function follow (current) {
    const pos = bot.entity.position.clone()
    current.queue = current.queue.then(() => current.view.updatePosition(pos)).catch(keepError(current))
    return current.queue
  }

  // a chunk that failed to reach the page must fail the next frame, not leave a hole in it
  function keepError (current) {
    return (err) => { current.error = current.error || err }
  }

  async function sync (current) {
    await follow(current)
    if (current.error) throw current.error
    await new Promise(resolve => setImmediate(resolve)) // chunk loads started by bot events
    sendPose(current)
    return { pose: pose(), sent: { ...current.counts }, size: { width, height } }
  }

  function onMove () {
    if (!page) return
    sendPose(page)
    follow(page)
  }

  io.on('connection', (socket) => {
    if (page) page.socket.disconnect(true)
    const counts = Object.fromEntries(COUNTED.map(name => [name, 0]))
    // WorldView talks to an emitter; this one counts what reaches the page
    const emitter = {
      emit (name, body) {
        if (name in counts) counts[name] += 1
        socket.emit(name, body)
      },
      on: (name, fn) => socket.on(name, fn)
    }
    const view = new WorldView(bot.world, viewDistance, bot.entity.position, emitter)
    const current = { socket, view, counts, queue: Promise.resolve(), error: null }
    page = current
    socket.emit('version', bot.version)
    current.queue = view.init(bot.entity.position).catch(keepError(current))
    view.listenToBot(bot)
    sendPose(current)
    socket.on('disconnect', () => {
      view.removeListenersFromBot(bot)
      if (page === current) page = null
    })
  })
  bot.on('move', onMove)

  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', resolve)
  })
  const bound = server.address().port

  let closed = false
  async function close () {
    if (closed) return
    closed = true
    bot.removeListener('move', onMove)
    if (page) page.view.removeListenersFromBot(bot)
    page = null
    io.disconnectSockets(true)
    const closing = new Promise(resolve => io.close(() => resolve())) // closes the HTTP server too
    server.closeAllConnections() // a browser's idle keep-alive connections would hold the close
    await closing
  }

  return { url: `http://127.0.0.1:${bound}/`, port: bound, close }
}

module.exports = { startView }
