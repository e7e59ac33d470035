'use strict';
/* global fetch */
/**
 * Runs in the view page before prismarine-viewer's client bundle (view.js serves both). The bundle
 * keeps its scene to itself, so this script watches it from outside, where its work shows: the Web
 * Worker that turns chunk sections into meshes (what is sent to it; view_worker.js tells when it
 * has meshed all of it), THREE's texture loads, and THREE's renders. From these,
 * `framebusView.waitDrawn()` tells when the picture on screen is the bot's world as it is now:
 * the server's `/framebus/sync` says what was sent for that, and the page waits until all of it
 * arrived, was meshed, textured and drawn, with the camera at the bot's pose.
 *
 * Between frames the page sleeps: requestAnimationFrame callbacks are held back, so an idle view
 * costs no rendering (a software renderer draws on the CPU that the rest of the environment
 * needs). It starts asleep; `framebusView.wake()` in a browser's console shows it live.
 */
(function () {
  const EYE_HEIGHT = 1.6 // prismarine-viewer's Viewer.playerHeight: the camera sits this far above the feet
  const POSE_TOLERANCE = 1e-4

  const state = {
    errors: [],
    versionSent: false,
    received: { loadChunk: 0, unloadChunk: 0, blockUpdate: 0 },
    pendingTextures: 0,
    renders: 0,
    scene: null,
    camera: null,
    asleep: true, // until the first frame is asked for: see waitDrawn
    heldFrames: [],
    gl: null
  }

  window.addEventListener('error', (event) => state.errors.push(String(event.message || event.error)))
  window.addEventListener('unhandledrejection', (event) => state.errors.push(String(event.reason)))

  // -- the meshing worker ------------------------------------------------------------------------
  // prismarine-viewer starts four meshing workers, each loading its 63 MB script (all of
  // minecraft-data) and a copy of every chunk: on a small machine that is most of a first frame's
  // time and memory. One worker does here: the first Worker the viewer creates is real (the
  // viewer's worker inside view_worker.js, which answers fences: see there), the others are
  // fronts that pass on what only they get (sections to mesh, spread by the viewer over its
  // workers) and drop what the real one got already (chunks, block updates, block states). Every
  // worker's answers go to the same handler in the viewer, so the real one's reaching it is enough.
  const NativeWorker = window.Worker
  let real = null
  let fenceId = 0
  window.Worker = function (url, options) {
    if (real === null) {
      real = new NativeWorker(String(url) === 'worker.js' ? 'framebus/view_worker.js' : url, options)
      const post = real.postMessage.bind(real)
      real.postMessage = (message, transfer) => {
        if (message) {
          if (message.type === 'version') state.versionSent = true
          if (message.type === 'chunk') state.received.loadChunk += 1
          if (message.type === 'unloadChunk') state.received.unloadChunk += 1
          if (message.type === 'blockUpdate') state.received.blockUpdate += 1
        }
        return transfer === undefined ? post(message) : post(message, transfer)
      }
      real.addEventListener('error', (event) => state.errors.push(`meshing worker: ${event.message}`))
      return real
    }
    return {
      postMessage (message) { if (message && message.type === 'dirty') real.postMessage(message) },
      addEventListener () {},
      removeEventListener () {},
      terminate () {},
      onmessage: null
    }
  }

  /** Resolves once the worker has meshed all it was sent so far, its meshes in the scene; to what
   * meshing cost it since the last fence. */
  function fence () {
    const id = ++fenceId
    return new Promise(resolve => {
      const listener = ({ data }) => {
        if (data && data.type === 'framebus:fence' && data.id === id) {
          real.removeEventListener('message', listener)
          resolve({ meshMs: Math.round(data.meshMs), sections: data.sections })
        }
      }
      real.addEventListener('message', listener)
      real.postMessage({ type: 'framebus:fence', id })
    })
  }

  // -- THREE, patched as the bundle installs it as a global ---------------------------------------
  function patchThree (THREE) {
    // WebGLRenderer sets its render() per instance, out of reach of its prototype; but every render
    // starts by updating the scene's and the camera's world matrices (three r128), and those are
    // prototype methods: a scene's update is a render starting, so the one before it is complete
    const updateMatrixWorld = THREE.Object3D.prototype.updateMatrixWorld
    THREE.Object3D.prototype.updateMatrixWorld = function () {
      if (this.isScene) {
        state.scene = this
        state.renders += 1
      } else if (this.isCamera && this.parent === null) {
        state.camera = this
      }
      return updateMatrixWorld.apply(this, arguments)
    }
    const load = THREE.TextureLoader.prototype.load
    THREE.TextureLoader.prototype.load = function (url, onLoad, onProgress, onError) {
      state.pendingTextures += 1
      let settled = false
      const settle = () => { if (!settled) { settled = true; state.pendingTextures -= 1 } }
      return load.call(this, url,
        (texture) => { settle(); if (onLoad) onLoad(texture) },
        onProgress,
        (err) => { settle(); state.errors.push(`texture ${url} failed to load`); if (onError) onError(err) })
    }
  }

  let three
  Object.defineProperty(window, 'THREE', {
    configurable: true,
    get: () => three,
    set: (value) => { three = value; if (value && value.WebGLRenderer) patchThree(value) }
  })

  // -- reading the picture back ------------------------------------------------------------------
  // The frame is read from the WebGL drawing buffer, not screenshotted: a PNG screenshot took
  // 200-400 ms of encoding and decoding for a 640x360 frame, a readback takes a few. The buffer
  // must survive its compositing for that, which WebGL allows when asked at context creation.
  const nativeGetContext = HTMLCanvasElement.prototype.getContext
  HTMLCanvasElement.prototype.getContext = function (type, attributes) {
    const webgl = typeof type === 'string' && type.indexOf('webgl') !== -1
    const context = nativeGetContext.call(this, type, webgl ? { ...attributes, preserveDrawingBuffer: true } : attributes)
    if (webgl && context) state.gl = context
    return context
  }

  /** The drawn picture: its size and its RGB bytes, rows top to bottom, base64-encoded. */
  function pixels () {
    const gl = state.gl
    if (!gl) throw new Error('the view page has no WebGL context (was WebGL available to the browser?)')
    const width = gl.drawingBufferWidth
    const height = gl.drawingBufferHeight
    const rgba = new Uint8Array(width * height * 4)
    gl.readPixels(0, 0, width, height, gl.RGBA, gl.UNSIGNED_BYTE, rgba)
    const rgb = new Uint8Array(width * height * 3)
    for (let y = 0; y < height; y++) { // GL's rows run bottom to top
      const from = (height - 1 - y) * width * 4
      const to = y * width * 3
      for (let x = 0; x < width; x++) {
        rgb[to + x * 3] = rgba[from + x * 4]
        rgb[to + x * 3 + 1] = rgba[from + x * 4 + 1]
        rgb[to + x * 3 + 2] = rgba[from + x * 4 + 2]
      }
    }
    let binary = ''
    for (let i = 0; i < rgb.length; i += 0x8000) binary += String.fromCharCode.apply(null, rgb.subarray(i, i + 0x8000))
    return { width, height, data: btoa(binary) }
  }

  // -- sleeping between frames --------------------------------------------------------------------
  const nativeRaf = window.requestAnimationFrame.bind(window)
  window.requestAnimationFrame = (callback) => {
    if (state.asleep) {
      state.heldFrames.push(callback)
      return 0
    }
    return nativeRaf(callback)
  }

  function wake () {
    if (!state.asleep) return
    state.asleep = false
    const held = state.heldFrames.splice(0)
    for (const callback of held) nativeRaf(callback)
  }

  // -- drawn? -------------------------------------------------------------------------------------
  /** What the page still lacks of what the server says it sent (empty: all here). */
  function notReceived (expected) {
    const out = []
    const { width, height } = window.framebusViewSize
    if (window.innerWidth !== width || window.innerHeight !== height) {
      out.push(`the window is ${window.innerWidth}x${window.innerHeight}, the view is served for ${width}x${height}`)
    }
    if (!state.versionSent) out.push('the Minecraft version has not reached the renderer')
    for (const [name, sent] of Object.entries(expected.sent)) {
      if (state.received[name] < sent) out.push(`${name}: ${state.received[name]} of ${sent} received`)
    }
    if (state.pendingTextures) out.push(`${state.pendingTextures} textures loading`)
    return out
  }

  function cameraOff (expected) {
    const camera = state.camera
    if (!camera) return ['nothing rendered yet']
    const { x, y, z, yaw, pitch } = expected.pose
    const off = [camera.position.x - x, camera.position.y - (y + EYE_HEIGHT), camera.position.z - z,
      camera.rotation.x - pitch, camera.rotation.y - yaw]
    if (off.every(d => Math.abs(d) <= POSE_TOLERANCE)) return []
    return [`the camera is not at the bot's pose (x ${x.toFixed(2)} y ${y.toFixed(2)} z ${z.toFixed(2)} ` +
            `yaw ${yaw.toFixed(3)} pitch ${pitch.toFixed(3)})`]
  }

  const tick = () => new Promise(resolve => setTimeout(resolve, 10))

  async function withDeadline (promise, deadline, what) {
    let timer
    const late = new Promise((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(what())), Math.max(0, deadline - performance.now()))
    })
    try {
      return await Promise.race([promise, late])
    } finally {
      clearTimeout(timer)
    }
  }

  /** Poll `lacking()` until it is empty; past the deadline, throw what it still lists. */
  async function until (lacking, deadline, timeoutMs) {
    while (true) {
      if (state.errors.length) throw new Error(`the view page failed: ${state.errors.join('; ')}`)
      const out = lacking()
      if (!out.length) return
      if (performance.now() > deadline) throw new Error(`the view was not drawn within ${timeoutMs} ms: ${out.join('; ')}`)
      await tick()
    }
  }

  /**
   * Resolve once the page shows the bot's world as it is now; reject after `timeoutMs` with what
   * is missing. The meshing is waited for asleep (no renders: the CPU goes to the workers), then
   * the page renders until the camera is at the bot's pose and two frames more were drawn (the
   * second one is on screen whatever the compositor was doing during the first). It leaves the
   * page asleep.
   */
  async function waitDrawn (timeoutMs = 20000) {
    const started = performance.now()
    const deadline = started + timeoutMs
    const phases = {} // ms from the start to the end of each phase: where a slow frame spent its time
    const mark = (name) => { phases[name] = Math.round(performance.now() - started) }
    const response = await fetch('framebus/sync')
    const expected = await response.json()
    if (!response.ok) throw new Error(`the view server's sync failed: ${expected.error}`)
    mark('sync')
    let meshing = {} // the ms the worker spent meshing for this frame, and how many sections
    while (true) {
      await until(() => notReceived(expected), deadline, timeoutMs)
      mark('received')
      const received = JSON.stringify(state.received)
      meshing = await withDeadline(fence(), deadline, () => `the view was not drawn within ${timeoutMs} ms: ` +
                         'the chunk sections received are not all meshed yet')
      mark('meshed')
      if (JSON.stringify(state.received) !== received) continue // more came while meshing: mesh that too
      wake()
      await until(() => cameraOff(expected), deadline, timeoutMs)
      mark('posed')
      const enough = state.renders + 2
      await until(() => state.renders >= enough ? [] : ['no render'], deadline, timeoutMs)
      mark('drawn')
      if (JSON.stringify(state.received) === received && !cameraOff(expected).length) break
    }
    state.asleep = true // the picture stays in the drawing buffer for pixels(), with no render competing
    return { phases, meshing, renders: state.renders, meshes: countMeshes(), sent: expected.sent }
  }

  function countMeshes () {
    let n = 0
    if (state.scene) state.scene.traverse(node => { if (node.isMesh) n += 1 })
    return n
  }

  window.framebusView = {
    waitDrawn,
    pixels,
    wake,
    sleep: () => { state.asleep = true },
    state: () => ({
      errors: state.errors.slice(),
      received: { ...state.received },
      pendingTextures: state.pendingTextures,
      renders: state.renders,
      meshes: countMeshes(),
      camera: state.camera && { position: state.camera.position.toArray(), rotation: state.camera.rotation.toArray().slice(0, 3) },
      asleep: state.asleep
    })
  }
})()
