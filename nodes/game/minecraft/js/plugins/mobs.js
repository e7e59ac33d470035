'use strict'
/**
 * Mobs that can be hunted, a flying-squid plugin.
 *
 * What flying-squid 1.12 already does: it spawns mobs (with gravity, no AI: they stand where they are put),
 * takes 1 health per hit from a full 20 for every mob, and on death plays the death animation and forgets
 * the entity without telling the clients or dropping anything.
 *
 * What this plugin adds, because the food, leather, string and bone tasks depend on it:
 * - each mob's real maximum health (a chicken has 4, a cow 10, a spider 16...);
 * - the held weapon's attack damage (a sword or an axe hits harder than a fist), and a knockback that fits
 *   the velocity packet (flying-squid's own overflows it and gets the attacker disconnected);
 * - VAB's strength effect for tasks that summon mobs (serv.vabStrength, set by the sidecar): one hit kills;
 * - on death: the mob is removed for every client and drops its loot from minecraft-data's entityLoot
 *   (cow: leather and beef, sheep: white wool and mutton, spider: string and spider eye...), counted with the
 *   episode's seeded random stream, at the place it died.
 */

const { Vec3 } = require('vec3')
const { between } = require('./rng')

const MAX_HEALTH = {
  chicken: 4, cow: 10, pig: 10, sheep: 8, rabbit: 3, spider: 16, skeleton: 20, zombie: 20, creeper: 20,
  enderman: 40, slime: 16, shulker: 30, horse: 20, wolf: 8, squid: 10
}

/** Java Edition 1.16 attack damage of the weapons; anything else hits like a fist. */
const DAMAGE = {
  wooden_sword: 4, golden_sword: 4, stone_sword: 5, iron_sword: 6, diamond_sword: 7, netherite_sword: 8,
  wooden_axe: 7, golden_axe: 7, stone_axe: 9, iron_axe: 9, diamond_axe: 9, netherite_axe: 10,
  wooden_pickaxe: 2, golden_pickaxe: 2, stone_pickaxe: 3, iron_pickaxe: 4, diamond_pickaxe: 5,
  wooden_shovel: 2.5, stone_shovel: 3.5, iron_shovel: 4.5, diamond_shovel: 5.5
}

/** Extra loot minecraft-data lacks: a sheep drops its wool. */
const EXTRA_LOOT = { sheep: [['white_wool', 1, 1]] }

function lootFor (registry, name, rng) {
  const out = []
  for (const d of registry.entityLoot[name]?.drops ?? []) {
    if (d.dropChance < 1 && rng() >= d.dropChance) continue
    const [lo, hi] = d.stackSizeRange ?? [1, 1]
    const n = between(rng, Math.max(lo, 1), Math.max(hi, 1))
    if (registry.itemsByName[d.item]) out.push([d.item, n])
  }
  for (const [item, lo, hi] of EXTRA_LOOT[name] ?? []) out.push([item, between(rng, lo, hi)])
  return out
}

module.exports.server = function (serv) {
  const spawnMob = serv.spawnMob
  serv.spawnMob = (type, world, position, opts) => {
    const mob = spawnMob(type, world, position, opts)
    mob.health = MAX_HEALTH[mob.name] ?? 20
    return mob
  }
}

module.exports.player = function (player, serv) {
  const { registry } = serv
  player.on('attack_cancel', (data) => {
    const held = player.inventory.slots[36 + player.heldItemSlot]
    data.damage = serv.vabStrength ? 1000 : (DAMAGE[held?.name] ?? 1)
    // flying-squid's knockback (5× the distance, in blocks per second) overflows the velocity packet's
    // 16 bits at a few blocks' distance and disconnects the client: a gentle push instead
    const away = data.attackedEntity.position.minus(player.position)
    const flat = new Vec3(away.x, 0, away.z)
    const len = Math.hypot(flat.x, flat.z) || 1
    data.velocity = flat.scaled(2 / len).offset(0, 1, 0)
  })
  player.on('attack_done', (data, cancelled) => {
    const mob = data.attackedEntity
    if (cancelled || mob.type !== 'mob' || mob.health > 0 || mob.looted) return
    mob.looted = true
    serv.destroyEntity(mob)
    serv.dropItems(mob.world, mob.position.offset(0, 0.2, 0), lootFor(registry, mob.name, serv.dropsRng))
  })
}

module.exports.lootFor = lootFor
