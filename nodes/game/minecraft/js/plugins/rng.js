'use strict'
/**
 * The random numbers of an episode's mechanics (how many coal a coal ore drops, whether leaves give a sapling):
 * one seeded stream per episode, set by the sidecar at reset, so that the same task, seed and actions give the
 * same inventory. flying-squid itself uses Math.random for drop velocities only, which changes nothing a
 * test or an agent sees.
 */

/** mulberry32: small, fast and good enough for game drops. */
function seeded (seed) {
  let a = seed >>> 0
  return function next () {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** An integer in [lo, hi], both included. */
function between (rng, lo, hi) {
  return lo + Math.floor(rng() * (hi - lo + 1))
}

module.exports = { seeded, between }
