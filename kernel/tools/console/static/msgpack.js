// A small msgpack codec for the console page: what the server sends (maps, arrays, strings,
// binary, numbers, booleans, nil) and what the page sends (maps of strings and numbers).
"use strict";
const MsgPack = (() => {
  const te = new TextEncoder(), td = new TextDecoder();

  function decode(buffer) {
    const bytes = new Uint8Array(buffer);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let pos = 0;
    const str = (n) => { const s = td.decode(bytes.subarray(pos, pos + n)); pos += n; return s; };
    const bin = (n) => { const b = bytes.slice(pos, pos + n); pos += n; return b; };
    const arr = (n) => { const a = new Array(n); for (let i = 0; i < n; i++) a[i] = read(); return a; };
    const map = (n) => { const m = {}; for (let i = 0; i < n; i++) { const k = read(); m[k] = read(); } return m; };
    function read() {
      const b = bytes[pos++];
      if (b <= 0x7f) return b;
      if (b >= 0xe0) return b - 0x100;
      if ((b & 0xf0) === 0x80) return map(b & 0x0f);
      if ((b & 0xf0) === 0x90) return arr(b & 0x0f);
      if ((b & 0xe0) === 0xa0) return str(b & 0x1f);
      let v;
      switch (b) {
        case 0xc0: return null;
        case 0xc2: return false;
        case 0xc3: return true;
        case 0xc4: v = bytes[pos]; pos += 1; return bin(v);
        case 0xc5: v = view.getUint16(pos); pos += 2; return bin(v);
        case 0xc6: v = view.getUint32(pos); pos += 4; return bin(v);
        case 0xca: v = view.getFloat32(pos); pos += 4; return v;
        case 0xcb: v = view.getFloat64(pos); pos += 8; return v;
        case 0xcc: return bytes[pos++];
        case 0xcd: v = view.getUint16(pos); pos += 2; return v;
        case 0xce: v = view.getUint32(pos); pos += 4; return v;
        case 0xcf: v = Number(view.getBigUint64(pos)); pos += 8; return v;
        case 0xd0: v = view.getInt8(pos); pos += 1; return v;
        case 0xd1: v = view.getInt16(pos); pos += 2; return v;
        case 0xd2: v = view.getInt32(pos); pos += 4; return v;
        case 0xd3: v = Number(view.getBigInt64(pos)); pos += 8; return v;
        case 0xd9: v = bytes[pos]; pos += 1; return str(v);
        case 0xda: v = view.getUint16(pos); pos += 2; return str(v);
        case 0xdb: v = view.getUint32(pos); pos += 4; return str(v);
        case 0xdc: v = view.getUint16(pos); pos += 2; return arr(v);
        case 0xdd: v = view.getUint32(pos); pos += 4; return arr(v);
        case 0xde: v = view.getUint16(pos); pos += 2; return map(v);
        case 0xdf: v = view.getUint32(pos); pos += 4; return map(v);
        default: throw new Error("msgpack: unsupported type byte 0x" + b.toString(16));
      }
    }
    return read();
  }

  function encode(value) {
    const out = [];
    const u8 = (...xs) => out.push(...xs);
    const u16 = (n) => u8((n >> 8) & 0xff, n & 0xff);
    const u32 = (n) => u8((n >>> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff);
    function write(v) {
      if (v === null || v === undefined) return u8(0xc0);
      if (v === true) return u8(0xc3);
      if (v === false) return u8(0xc2);
      if (typeof v === "number") {
        if (Number.isInteger(v) && v >= 0 && v <= 0xffffffff) {
          if (v <= 0x7f) return u8(v);
          if (v <= 0xffff) { u8(0xcd); return u16(v); }
          u8(0xce); return u32(v);
        }
        if (Number.isInteger(v) && v < 0 && v >= -0x80000000) {
          if (v >= -32) return u8(v & 0xff);
          u8(0xd2); return u32(v >>> 0);
        }
        const b = new Uint8Array(8); new DataView(b.buffer).setFloat64(0, v); u8(0xcb); return u8(...b);
      }
      if (typeof v === "string") {
        const b = te.encode(v);
        if (b.length < 32) u8(0xa0 | b.length); else if (b.length <= 0xffff) { u8(0xda); u16(b.length); } else { u8(0xdb); u32(b.length); }
        for (const x of b) out.push(x);
        return;
      }
      if (Array.isArray(v)) {
        if (v.length < 16) u8(0x90 | v.length); else { u8(0xdc); u16(v.length); }
        return v.forEach(write);
      }
      if (typeof v === "object") {
        const keys = Object.keys(v);
        if (keys.length < 16) u8(0x80 | keys.length); else { u8(0xde); u16(keys.length); }
        for (const k of keys) { write(k); write(v[k]); }
        return;
      }
      throw new Error("msgpack: cannot encode " + typeof v);
    }
    write(value);
    return new Uint8Array(out);
  }
  return { encode, decode };
})();
