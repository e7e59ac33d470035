'use strict';
/* global importScripts */
/**
 * Wraps prismarine-viewer's meshing worker (its /worker.js) to answer one question the page asks
 * before a screenshot: "have you meshed every section you were told about?". From the page the
 * answer cannot be worked out: the worker merges a section marked dirty twice into one mesh and
 * one "sectionFinished", so counting messages from outside drifts. Here, inside the worker, the
 * messages in and out are seen in the order the worker handles them, so the set of sections it
 * still owes is exact.
 *
 * A `{type: 'framebus:fence', id}` message is answered with the same object once that set is
 * empty; since a worker's messages arrive in order, every mesh it made before is already with the
 * page when the answer is.
 *
 * Meshing waits for a fence, too. The viewer's worker meshes its dirty sections every 50 ms, and a
 * column arriving marks its neighbours dirty again, so while the chunks around the bot stream in,
 * each section is meshed several times over (a first frame took 8 s on two cores). Held until the
 * page asks for a frame, when everything sent has arrived, each section is meshed once, and an idle
 * view spends nothing on meshing either.
 */
(function () {
  const owed = new Set() // sections marked dirty here and not yet reported finished
  const fences = []
  const post = self.postMessage.bind(self)
  const nativeSetInterval = self.setInterval.bind(self)
  let meshTick = null // the viewer's meshing loop body, run here only while a fence waits

  function sectionKey (x, y, z) {
    return `${Math.floor(x / 16) * 16},${Math.floor(y / 16) * 16},${Math.floor(z / 16) * 16}`
  }

  const work = { meshMs: 0, sections: 0 } // since the last fence answered: what a frame cost here

  function answerFences () {
    while (owed.size === 0 && fences.length) {
      post({ ...fences.shift(), ...work })
      work.meshMs = 0
      work.sections = 0
    }
  }

  function mesh () {
    const started = performance.now()
    meshTick()
    work.meshMs += performance.now() - started
  }

  // the viewer's worker starts exactly one interval, its meshing loop: keep its body instead
  self.setInterval = function (fn, ms, ...args) {
    if (meshTick === null) {
      meshTick = fn
      return 0
    }
    return nativeSetInterval(fn, ms, ...args)
  }
  // while a fence waits, mesh (the loop body does nothing until the block states have arrived)
  nativeSetInterval(() => {
    if (fences.length && meshTick) mesh()
    answerFences()
  }, 20)

  // the viewer's worker calls the global postMessage: this own property comes first
  self.postMessage = function (message, transfer) {
    const out = transfer === undefined ? post(message) : post(message, transfer)
    if (message && message.type === 'geometry') work.sections += 1
    if (message && message.type === 'sectionFinished') owed.delete(message.key)
    return out
  }

  let handler = null
  Object.defineProperty(self, 'onmessage', {
    configurable: true,
    get: () => handler,
    set: (fn) => { handler = fn }
  })
  self.addEventListener('message', (event) => {
    const data = event.data
    if (data && data.type === 'framebus:fence') {
      fences.push(data)
      if (meshTick) mesh()
      answerFences()
      return
    }
    if (data && data.type === 'dirty') owed.add(sectionKey(data.x, data.y, data.z))
    if (data && data.type === 'reset') owed.clear()
    if (handler) handler.call(self, event)
    answerFences()
  })

  importScripts('../worker.js')
})()
