// The seat node's MicroPython rp2 image run in rp2040js (an RP2040 emulator that executes
// the Cortex-M0+ instructions and counts their cycles at 125 MHz), with the seat's
// peripherals modelled here, in emulated time, after their data sheets:
//
//   SPI0 (GP16-19, CS GP17)  an MFRC522: its register set as the driver uses it (FIFO,
//                            ComIrq, Transceive with bit framing, ErrorReg/CollReg, RFCfgReg
//                            receiver gain, RxThresholdReg), 8 us a byte (1 MHz), and
//                            ISO 14443-3A tags (IDLE/READY/ACTIVE/HALT, cascade levels,
//                            CRC_A) with a strength each (a faint second card: its answer
//                            weaker than the first, masked under it on the air).  Each
//                            exchange takes its air time at 106 kbit/s (ISO 14443-2: a
//                            bit is 128/fc = 9.44 us; a frame is its start bit, 9 bits a
//                            byte with parity, a short frame's 7 bits, and its end), the
//                            tag answers after the frame delay time (1172/fc = 86.4 us),
//                            and an exchange nobody answers ends when the chip's timer
//                            runs out (TModeReg TAuto: started at the end of sending,
//                            TPrescaler/TReload as the driver set them: 1.025 ms), with
//                            TimerIRq, as MFRC522 data sheet 8.5 describes;
//   I2C0 (GP0/1)             a panel at 0x3C that acknowledges each byte after the 9 clocks
//                            it takes at 400 kHz, and keeps display on/off and the bytes
//                            written; "panelreset" makes it lose its settings and RAM
//                            without any failed transfer;
//   SPI1 (GP10/11)           a panel's 4-wire SPI: each byte its 8 clocks at the rate set;
//   GP2-GP9                  the eight buttons (pull-ups, a press pulls the pin low);
//   USB CDC                  full-speed bulk OUT: 64-byte packets of 55 us, at most 19 in
//                            a 1 ms frame (the host's schedule), none before the device
//                            re-arms its endpoint; bulk IN (the node to the host): the
//                            host polls the endpoint once a 1 ms frame, so a packet the
//                            node queues leaves at the next frame's poll (55 us on the
//                            wire), one a frame.
//
// node seat-pico.mjs BOOTROM.mjs IMAGE.uf2 SCRIPT.json
// SCRIPT: {"steps": [...]} run in emulated time; each step is one of
//   {"at_ms": t}                          wait until emulated time t (ms)
//   {"after_ms": d}                       wait d ms of emulated time
//   {"wait_line": "TEXT", "timeout_ms": n} wait for a line from the node containing TEXT
//   {"send": "bytes"}                     the host writes these bytes (frames with \n)
//   {"tags": [["UID", strength], ...]}    what lies on the reader from now on
//   {"press": "truco"} / {"release": "truco"}
//   {"panelreset": true}
//   {"mark": "name"}                      print the emulated time under that name
//   {"stream": ["bytes", ...]}            from now on, the next of these each time the node
//                                         sends a DACK (a Pi that waits for each DACK);
//                                         {"stream": []} stops it
//   {"bridge": {"fd": n, "clock_ms": 5}}  the USB CDC joined to file descriptor n (a pty's
//                                         master side the caller passes: what the host
//                                         writes there reaches the node with the frame
//                                         timing below, what the node sends is written
//                                         there), the emulated time printed every
//                                         clock_ms as  C <emulated us>  at once; the run
//                                         ends when a line "end" comes on stdin
// Every line the node sends is printed as  L <emulated us> <line>; marks as
// M <emulated us> <name>; panel events as P <emulated us> on|off|reset; the end as END.
// A profile (bench/pico.py --profile): with TRUCO_PICO_PROFILE=FILE the CPU's program
// counter (and link register) is sampled every TRUCO_PICO_PROFILE_US (50) of emulated
// time into FILE (little-endian uint32 triples: us, pc, lr), and each MFRC522 exchange
// is printed as  R <emulated us> <the bytes sent, hex>.
import fs from 'fs';
import { Simulator, USBCDC, ConsoleLogger, LogLevel } from 'rp2040js';

const [bootromPath, imagePath, scriptPath] = process.argv.slice(2);
const { bootromB1 } = await import(new URL(bootromPath, `file://${process.cwd()}/`).href);
const script = JSON.parse(fs.readFileSync(scriptPath, 'utf8'));
const sim = new Simulator();
const mcu = sim.rp2040;
mcu.loadBootrom(bootromB1);
mcu.logger = new ConsoleLogger(LogLevel.Error);
const image = fs.readFileSync(imagePath);
for (let off = 0; off + 512 <= image.length; off += 512) {
  const dv = new DataView(image.buffer, image.byteOffset + off, 512);
  if (dv.getUint32(0, true) !== 0x0a324655 || dv.getUint32(4, true) !== 0x9e5d5157) continue;
  const addr = dv.getUint32(12, true), size = dv.getUint32(16, true);
  mcu.flash.set(image.subarray(off + 32, off + 32 + size), addr - 0x10000000);
}
const clock = sim.clock;
const nowUs = () => Math.round(clock.nanos / 1000);
const after = (us, fn) => clock.createAlarm(fn).schedule(Math.max(1, Math.round(us * 1000)));
const out = [];
const say = (text) => out.push(text);
const PROFILE = process.env.TRUCO_PICO_PROFILE;
const samples = [];
if (PROFILE) {
  const every = Number(process.env.TRUCO_PICO_PROFILE_US || 50);
  const sample = () => {
    samples.push(nowUs(), mcu.core.PC, mcu.core.registers[14]);
    after(every, sample);
  };
  after(every, sample);
}

// -- ISO 14443-3A tags and the MFRC522 -------------------------------------------------
function crcA(bytes) {
  let crc = 0x6363;
  for (let b of bytes) {
    b ^= crc & 0xff; b = (b ^ (b << 4)) & 0xff;
    crc = ((crc >> 8) ^ (b << 8) ^ (b << 3) ^ (b >> 4)) & 0xffff;
  }
  return [crc & 0xff, crc >> 8];
}
const toBits = (bytes, lastBits = 0) => {
  const bits = [];
  for (const b of bytes) for (let i = 0; i < 8; i++) bits.push((b >> i) & 1);
  return lastBits ? bits.slice(0, bits.length - 8 + lastBits) : bits;
};
const fromBits = (bits) => {
  const out = new Array((bits.length + 7) >> 3).fill(0);
  bits.forEach((bit, i) => { out[i >> 3] |= bit << (i & 7); });
  return out;
};
const eq = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);
class Tag {
  constructor(uidHex, strength = 1.0) {
    const uid = uidHex.match(/../g).map((h) => parseInt(h, 16));
    this.strength = strength;
    this.levels = uid.length === 4 ? [uid]
      : uid.length === 7 ? [[0x88, ...uid.slice(0, 3)], uid.slice(3)]
      : [[0x88, ...uid.slice(0, 3)], [0x88, ...uid.slice(3, 6)], uid.slice(6)];
    this.state = 'IDLE'; this.level = 0; this.halted = false;
  }
  cl(level) { const c = this.levels[level]; return [...c, c[0] ^ c[1] ^ c[2] ^ c[3]]; }
  fallBack() { this.state = this.halted ? 'HALT' : 'IDLE'; }
  answer(bits) {
    if (bits.length === 7) {
      const cmd = fromBits(bits)[0];
      if ((cmd === 0x52 && (this.state === 'IDLE' || this.state === 'HALT')) || (cmd === 0x26 && this.state === 'IDLE')) {
        this.state = 'READY'; this.level = 0; return toBits([0x44, 0x00]);
      }
      this.fallBack(); return null;
    }
    const head = fromBits(bits.slice(0, 16));
    if (this.state === 'READY' && head[0] === [0x93, 0x95, 0x97][this.level]) {
      const nvb = head[1], clBits = toBits(this.cl(this.level));
      if (nvb === 0x70) {
        const frame = fromBits(bits);
        if (frame.length !== 9 || !eq(frame.slice(2, 7), this.cl(this.level))) return null;
        if (!eq(crcA(frame.slice(0, 7)), frame.slice(7))) return null;
        const last = this.level === this.levels.length - 1, sak = last ? 0x00 : 0x04;
        if (last) this.state = 'ACTIVE'; else this.level += 1;
        return toBits([sak, ...crcA([sak])]);
      }
      const known = ((nvb >> 4) - 2) * 8 + (nvb & 0x0f);
      if (known < 0 || known > 32 || bits.length !== 16 + known) { this.fallBack(); return null; }
      if (!eq(bits.slice(16), clBits.slice(0, known))) return null;
      return clBits.slice(known);
    }
    if (this.state === 'ACTIVE' && eq(fromBits(bits), [0x50, 0x00, ...crcA([0x50, 0x00])])) {
      this.state = 'HALT'; this.halted = true; return null;
    }
    this.fallBack(); return null;
  }
}
const GAIN_DB = [18, 23, 18, 23, 33, 38, 43, 48];
const BIT_US = 128 / 13.56; // ISO 14443-2 type A at 106 kbit/s: 9.44 us a bit
const FDT_US = 1172 / 13.56; // a tag's frame delay time after a command ending in 0: 86.4 us
class Mfrc522 {
  constructor() { this.tags = []; this.reset(); this.cs = true; this.pos = 0; this.addr = 0; this.generation = 0; this.exchanges = 0; }
  reset() {
    this.regs = new Array(64).fill(0);
    this.regs[0x14] = 0x80; this.regs[0x0e] = 0x80; this.regs[0x18] = 0x84; this.regs[0x26] = 0x48;
    this.regs[0x37] = 0x92; this.fifo = []; this.command = 0;
  }
  select(low) { this.cs = !low; this.pos = 0; }
  // One SPI byte exchanged while CS is low: returns the byte on MISO.
  exchange(mosi) {
    if (this.cs) return 0xff;
    let miso = 0;
    if (this.pos === 0) this.addr = mosi;
    else if (this.addr & 0x80) { miso = this.read((this.addr >> 1) & 0x3f); this.addr = mosi; }
    else this.write((this.addr >> 1) & 0x3f, mosi);
    this.pos += 1;
    return miso;
  }
  read(reg) {
    if (reg === 0x09) return this.fifo.length ? this.fifo.shift() : 0;
    if (reg === 0x0a) return this.fifo.length;
    return this.regs[reg];
  }
  write(reg, v) {
    if (reg === 0x01) {
      this.generation += 1; // a new command (Idle, soft reset) cancels an exchange under way
      if ((v & 0x0f) === 0x0f) { this.reset(); return; }
      this.command = v & 0x0f; this.regs[1] = v & 0x3f;
    } else if (reg === 0x04) {
      if (v & 0x80) this.regs[4] |= v & 0x7f; else this.regs[4] &= ~v & 0x7f;
    } else if (reg === 0x0a) { if (v & 0x80) this.fifo = []; }
    else if (reg === 0x09) this.fifo.push(v);
    else if (reg === 0x0d) { this.regs[0x0d] = v & 0x7f; if (v & 0x80 && this.command === 0x0c) this.transceive(); }
    else this.regs[reg] = v;
  }
  // The timer's period (data sheet 8.5): TPrescaler 12 bits (TModeReg low nibble and
  // TPrescalerReg), f = 13.56 MHz / (2 x TPrescaler + 1), TReload + 1 ticks.
  timerUs() {
    const prescaler = ((this.regs[0x2a] & 0x0f) << 8) | this.regs[0x2b];
    const reload = (this.regs[0x2c] << 8) | this.regs[0x2d];
    return (reload + 1) * (2 * prescaler + 1) / 13.56;
  }
  transceive() {
    const framing = this.regs[0x0d], txLast = framing & 7, rxAlign = (framing >> 4) & 7;
    const bits = toBits(this.fifo, txLast);
    if (PROFILE) say(`R ${nowUs()} ${this.fifo.map((b) => b.toString(16)).join(',')}`);
    this.fifo = []; this.regs[6] = 0;
    this.exchanges += 1;
    // on the air at 106 kbit/s: start bit, the bits (a parity bit after each whole byte),
    // end of frame; a short frame (7 bits) has no parity
    const frameBits = (n) => 1 + n + Math.floor(n / 8) + 1;
    const txUs = frameBits(bits.length) * BIT_US;
    const generation = this.generation;
    const settle = (us, fn) => after(us, () => { if (this.generation === generation) fn(); });
    const on = (this.regs[0x14] & 3) === 3;
    const gain = 10 ** ((GAIN_DB[(this.regs[0x26] >> 4) & 7] - 48) / 20);
    const th = this.regs[0x18], heardAt = 0.03 * Math.max(1, th >> 4) / 8, ratio = Math.max(1, th & 7) / 8;
    const loud = [];
    for (const tag of on ? this.tags : []) {
      const a = tag.answer(bits), amp = tag.strength * gain;
      if (a !== null && amp >= heardAt) loud.push([amp, a]);
    }
    const strongest = Math.max(0, ...loud.map(([amp]) => amp));
    const answers = loud.filter(([amp]) => amp >= strongest * ratio).map(([, a]) => a);
    // nobody answers: the timer, started when sending ended, runs out (TimerIRq)
    if (!answers.length) { settle(txUs + this.timerUs(), () => { this.regs[4] |= 0x01; }); return; }
    const length = Math.max(...answers.map((a) => a.length));
    const rxUs = FDT_US + frameBits(length) * BIT_US;
    settle(txUs + rxUs, () => this.received(answers, length, rxAlign));
  }
  received(answers, length, rxAlign) {
    const received = []; let coll = null;
    for (let i = 0; i < length; i++) {
      const vals = new Set(answers.filter((a) => i < a.length).map((a) => a[i]));
      if (coll === null && vals.size > 1) coll = i;
      received.push(coll !== null ? 0 : [...vals][0]);
    }
    const positions = [...new Array(rxAlign).fill(0), ...received];
    this.fifo = fromBits(positions);
    this.regs[0x0c] = positions.length % 8;
    if (coll !== null) {
      this.regs[6] |= 0x08;
      const p = rxAlign + coll + 1;
      this.regs[0x0e] = (this.regs[0x0e] & 0x80) | (p > 32 ? 0x20 : p % 32);
    }
    this.regs[4] |= 0x20;
  }
}
const reader = new Mfrc522();
mcu.gpio[17].addListener((state) => reader.select(state === 0));
const spi = mcu.spi[0];
spi.onTransmit = (v) => { const r = reader.exchange(v); after(8, () => spi.completeTransmit(r)); };

// -- the panel on I2C0 ------------------------------------------------------------------
// 400 kHz: 9 clocks a byte (8 bits and the acknowledge) are 22.5 us
const panel = { on: false, bytes: 0, control: null, first: true };
const i2c = mcu.i2c[0];
i2c.onStart = () => after(2.5, () => i2c.completeStart());
i2c.onConnect = (addr) => { panel.first = true; after(22.5, () => i2c.completeConnect(addr === 0x3c)); };
i2c.onWriteByte = (v) => {
  panel.bytes += 1;
  if (panel.first) { panel.control = v; panel.first = false; }
  else if (panel.control === 0x00) {
    if (v === 0xaf && !panel.on) { panel.on = true; say(`P ${nowUs()} on`); }
    if (v === 0xae && panel.on) { panel.on = false; say(`P ${nowUs()} off`); }
  }
  after(22.5, () => i2c.completeWrite(true));
};
i2c.onReadByte = () => after(22.5, () => i2c.completeRead(0xff));
i2c.onStop = () => after(2.5, () => i2c.completeStop());

// -- a panel on SPI1 (GP10 SCK, GP11 MOSI): the SSD1309's 4-wire SPI, for bench/panel_bus.py --
// Each byte takes its 8 clocks at the rate the firmware set (SSPCPSR and SCR: 125 MHz over
// the divisors), one after another from the 8-deep FIFO; the bytes are counted.
const spi1 = mcu.spi[1];
let spi1Bytes = 0;
spi1.onTransmit = () => {
  spi1Bytes += 1;
  after(8e6 / Math.max(1, spi1.clockFrequency), () => spi1.completeTransmit(0));
};

// -- buttons ------------------------------------------------------------------------------
const BUTTONS = { truco: 2, envido: 3, real_envido: 4, falta_envido: 5, flor: 6, quiero: 7, no_quiero: 8, mazo: 9 };
for (const pin of Object.values(BUTTONS)) mcu.gpio[pin].setInputValue(true);

// -- USB CDC with a full-speed host's frame timing ---------------------------------------
const cdc = new USBCDC(mcu.usbCtrl);
const hostOut = [];
let pendingRead = null; // the device's OUT request waiting for the host's next frame
let line = '';
const usb = mcu.usbCtrl;
let bridgeFd = null;
cdc.onSerialData = (value) => {
  if (bridgeFd !== null) {
    try { fs.writeSync(bridgeFd, Buffer.from(value)); } catch { /* the host closed the port */ }
  }
  for (const b of value) {
    if (b === 10 || b === 13) { if (line) say(`L ${nowUs()} ${line}`); line = ''; onLine(); }
    else line += String.fromCharCode(b);
  }
};
let connected = false;
cdc.onDeviceConnected = () => { connected = true; say(`M ${nowUs()} usb`); };
// A full-speed bulk OUT packet of 64 bytes is about 55 us on the wire with its token and
// handshake; the host schedules at most 19 of them in a 1 ms frame, and a device that has
// not re-armed its endpoint waits for the host's next try (NAK: the next frame).
const PACKET_US = 55, PACKETS_PER_FRAME = 19;
let frameStartUs = 0, packetsThisFrame = 0, delivering = false;
const frameTick = () => { frameStartUs = nowUs(); packetsThisFrame = 0; deliver(); after(1000, frameTick); };
function deliver() {
  if (!pendingRead || !hostOut.length || delivering) return;
  if (packetsThisFrame >= PACKETS_PER_FRAME) return; // the next frame
  delivering = true;
  packetsThisFrame += 1;
  after(PACKET_US, () => {
    delivering = false;
    if (!pendingRead) return;
    const { endpoint, size } = pendingRead;
    pendingRead = null;
    const n = Math.min(size, 64, hostOut.length);
    usb.endpointReadDone(endpoint, Uint8Array.from(hostOut.splice(0, n)));
  });
}
after(1000, frameTick);
const originalRead = usb.onEndpointRead;
usb.onEndpointRead = (endpoint, size) => {
  if (endpoint === cdc.outEndpoint) { pendingRead = { endpoint, size }; deliver(); }
  else originalRead(endpoint, size);
};
const hostWrite = (text) => { for (const ch of text) hostOut.push(ch.charCodeAt(0)); deliver(); };
function bridge(opts) {
  bridgeFd = opts.fd;
  const every = (opts.clock_ms ?? 5) * 1000;
  const tick = () => { process.stdout.write(`C ${nowUs()}\n`); after(every, tick); };
  tick();
  const input = fs.createReadStream(null, { fd: bridgeFd, autoClose: false, highWaterMark: 4096 });
  input.on('data', (chunk) => { for (const b of chunk) hostOut.push(b); deliver(); });
  input.on('error', () => { /* the host side closed: nothing more comes */ });
  let said = '';
  process.stdin.on('data', (d) => { said += d.toString(); if (said.includes('end')) finish(0); });
}
// Bulk IN: the host polls the node's endpoint once a frame; a packet queued now leaves at
// the next frame's poll (and its 55 us on the wire), one packet a frame.
let lastInSlotUs = 0;
const inSlots = [];
const readyIn = usb.indicateBufferReady.bind(usb);
const cdcWrite = usb.onEndpointWrite;
usb.indicateBufferReady = (endpoint, out) => {
  if (out || endpoint !== cdc.inEndpoint || !connected) { readyIn(endpoint, out); return; }
  const slot = Math.max(Math.floor(nowUs() / 1000) * 1000 + 1000, lastInSlotUs + 1000) + PACKET_US;
  lastInSlotUs = slot - PACKET_US;
  inSlots.push(slot);
  after(slot - nowUs(), () => readyIn(endpoint, out));
};
usb.onEndpointWrite = (endpoint, buffer) => {
  if (endpoint !== cdc.inEndpoint || !connected || !inSlots.length) { cdcWrite(endpoint, buffer); return; }
  const slot = inSlots.shift();
  after(Math.max(1, slot - nowUs()), () => cdcWrite(endpoint, buffer));
};
void frameStartUs;

// -- the script ---------------------------------------------------------------------------
const lines = [];
let waiting = null;
let stream = [];
function onLine() {
  const last = out[out.length - 1] ?? '';
  if (stream.length && last.startsWith('L ') && last.includes(' DACK ')) {
    const update = stream.shift();
    say(`M ${nowUs()} stream ${stream.length}`);
    hostWrite(update);
  }
  if (waiting && out.length && out[out.length - 1].startsWith('L ') && out[out.length - 1].includes(waiting.text)) {
    const w = waiting; waiting = null; w.resolve();
  }
}
void lines;
let step = 0;
function next() {
  while (step < script.steps.length) {
    const s = script.steps[step++];
    if (s.at_ms !== undefined) {
      const delta = s.at_ms * 1000 - nowUs();
      if (delta > 0) { after(delta, next); return; }
    } else if (s.after_ms !== undefined) {
      after(s.after_ms * 1000, next); return;
    } else if (s.wait_line !== undefined) {
      const timeout = s.timeout_ms ?? 5000;
      let done = false;
      waiting = { text: s.wait_line, resolve: () => { if (!done) { done = true; next(); } } };
      after(timeout * 1000, () => { if (!done) { done = true; waiting = null; say(`T ${nowUs()} ${s.wait_line}`); next(); } });
      return;
    } else if (s.send !== undefined) {
      hostWrite(s.send);
    } else if (s.tags !== undefined) {
      reader.tags = s.tags.map(([uid, strength]) => new Tag(uid, strength));
      say(`M ${nowUs()} tags ${s.tags.length}`);
    } else if (s.press !== undefined) {
      mcu.gpio[BUTTONS[s.press]].setInputValue(false); say(`M ${nowUs()} press ${s.press}`);
    } else if (s.release !== undefined) {
      mcu.gpio[BUTTONS[s.release]].setInputValue(true); say(`M ${nowUs()} release ${s.release}`);
    } else if (s.panelreset) {
      panel.on = false; say(`P ${nowUs()} reset`);
    } else if (s.stream !== undefined) {
      stream = s.stream.slice();
      if (stream.length) hostWrite(stream.shift());
      say(`M ${nowUs()} stream ${stream.length}`);
    } else if (s.bridge !== undefined) {
      bridge(s.bridge);
      return; // the caller ends the run
    } else if (s.mark !== undefined) {
      say(`M ${nowUs()} ${s.mark}`);
    }
  }
  finish(0);
}
function finish(code) {
  if (PROFILE) fs.writeFileSync(PROFILE, Buffer.from(Uint32Array.from(samples).buffer));
  say(`END ${nowUs()} wall_ms=${Date.now() - t0} connected=${connected} i2c_bytes=${panel.bytes} spi1_bytes=${spi1Bytes}`);
  process.stdout.write(out.join('\n') + '\n', () => process.exit(code));
}
const t0 = Date.now();
setTimeout(() => { say(`TIMEOUT ${nowUs()}`); finish(2); }, (script.wall_timeout_s ?? 600) * 1000);
mcu.core.PC = 0x10000000;
after(1, next);
sim.execute();
