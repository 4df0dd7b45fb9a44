"""Pin assignments and the stored seat number (see hardware/wiring.md).

GPn below are RP2040 GPIO numbers (the "GP" labels on the Pico's silkscreen),
not physical pin numbers.
"""

# MFRC522 on SPI0.
SPI_ID = 0
SPI_BAUDRATE = 1000000  # 1 MHz: robust over 10-20 cm jumper wires (chip allows 10 MHz)
PIN_MISO = 16  # physical pin 21
PIN_CS = 17  # physical pin 22, MFRC522 "SDA"
PIN_SCK = 18  # physical pin 24
PIN_MOSI = 19  # physical pin 25
PIN_RST = 20  # physical pin 26

# Buttons: contact to GND, internal pull-up (pressed reads 0).
BUTTON_PINS = (
    ("truco", 2),  # physical pin 4
    ("envido", 3),  # physical pin 5
    ("real_envido", 4),  # physical pin 6
    ("falta_envido", 5),  # physical pin 7
    ("flor", 6),  # physical pin 9
    ("quiero", 7),  # physical pin 10
    ("no_quiero", 8),  # physical pin 11
    ("mazo", 9),  # physical pin 12
)

# Status LED: the on-board LED ("LED" works on Pico and Pico W) and an optional
# panel LED on GP15 (physical pin 20) through a 330 ohm resistor.
LED_ONBOARD = "LED"
PIN_LED_PANEL = 15

# Hold this button while plugging the node in to skip the app (maintenance mode).
MAINTENANCE_BUTTON = "mazo"

# The seat's OLED when the node drives it (one cable per seat).  A 4-pin I2C module on
# I2C0: SDA on GP0 (physical pin 1), SCL on GP1 (physical pin 2), 400 kHz over the
# 10-20 cm to the panel.  Its type and address are kept in PANEL_FILE ("sh1106 3C");
# the Pi names them (PANEL command) from its pin map.
I2C_ID = 0
PIN_SDA = 0
PIN_SCL = 1
I2C_FREQ = 400000
# The 2.42" SSD1309 module is driven on its 4-wire SPI, as it leaves the factory (no
# jumpers to move, RES pulsed by the node at power-up): SPI1 at 8 MHz, SCK GP10, MOSI
# GP11, D/C GP12, CS GP13, RES GP14 (physical pins 14, 15, 16, 17, 19).  A full screen
# takes 2.5 ms there against 24.6 ms on I2C at 400 kHz (the emulated Pico,
# bench/panel_bus.py): what keeps a full update's DACK within 100 ms (firmware/README.md,
# section 10).  SPI has no acknowledge, so a missing panel there is never reported.  The
# 4-pin 0.96" SSD1306 and 1.3" SH1106 modules speak I2C only.  The bus follows the panel's
# type, which the Pi names from its pin map (PANEL command) and the node keeps.
PANEL_BUSES = {"ssd1306": "i2c", "sh1106": "i2c", "ssd1309": "spi"}
PANEL_SPI_ID = 1
PANEL_SPI_BAUDRATE = 8000000
PIN_PANEL_SCK = 10
PIN_PANEL_MOSI = 11
PIN_PANEL_DC = 12
PIN_PANEL_CS = 13
PIN_PANEL_RES = 14
PANEL_FILE = "panel.txt"
DEFAULT_PANEL = ("ssd1306", 0x3C)

# Reader polling period: a card counts as arrived after CONFIRM_READS (2, in
# seatnode/tags.py) identical consecutive reads, the second made right after the first
# read of a new card, so it reaches the Pi at most 15 ms + two reads (about 9.5 ms each
# for a 7-byte UID) after landing: under 50 ms (firmware/PROTOCOL.md, "Timing").
POLL_READER_MS = 15
REINIT_READER_MS = 2000  # how often to retry a reader that did not answer
LOOP_SLEEP_MS = 5  # the loop never sleeps past a due poll
# Bytes from the Pi taken per pass of the loop, after the buttons and the reader: the
# most a pass spends on the link before the player's inputs are sampled again.
USB_READ_BUDGET = 48
# A display update's counted block (protocols 3 and 4) is read straight into its buffer,
# at most this many bytes a pass and only those already there (the rp2 port's stdin
# blocks until every byte asked for has come: a byte is taken only once poll says so).
BLOCK_READ_BUDGET = 128

# The heap's garbage is collected right after a reader poll once the node has taken this
# many of the Pi's bytes since the last collection (a whole screen's update is 1.4 KB and
# leaves about 10 KB of garbage), or this long after it.  Left to MicroPython, garbage
# piles up until the heap is full, and until then every call of a function whose frame
# is too big for the C stack (more than 11 words: most of the reader's driver) searches
# the heap for room past all of it: on an emulated Pico a card read under display traffic
# took 32 ms instead of 9 then, and one card in thirty reached the Pi 80 to 95 ms after it
# landed.  (``gc.mem_alloc()`` would say how much garbage there is, but it counts the
# whole heap: far too slow to ask every poll.)
GARBAGE_AFTER_BYTES = 2048
GARBAGE_AFTER_MS = 10000
# ... but not while a display update's block waits to be checked, or has no more than this
# many bytes still to come: its check and the collection in one poll period would make the
# next poll late (a collection after a poll takes 4 to 6 ms, a block's check up to 10).
GARBAGE_BLOCK_NEAR = 256

# While a button's contact settles (changed less than the debounce time, 20 ms, ago) the
# loop's passes are short (no display work, no collection), so its PRESS is not late
# behind a block's check (up to 10 ms) or a collection (4 to 6 ms); for this long at most
# in a row, so a contact that chatters on does not stop the display.
SETTLE_HOLD_MS = 30

# Hardware watchdog (machine.WDT): the loop feeds it every pass; a node stuck for
# this long resets itself.  The RP2040's longest is 8388 ms.
WDT_TIMEOUT_MS = 3000
# An unexpected exception is written here (the last one; mpremote cat crash.txt),
# then the node resets.
CRASH_FILE = "crash.txt"
CRASH_FILE_MAX = 4096
# The REPL command leaves this file and resets (a started watchdog cannot be
# stopped); the next boot finds it, deletes it and stays in the REPL, no watchdog.
REPL_FLAG_FILE = "repl.flag"

SEAT_FILE = "seat.txt"


def load_seat(path=SEAT_FILE):
    """The seat number stored on the node's flash, or None if unset or unreadable."""
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    if not text.isdigit():
        return None
    seat = int(text)
    if seat > 5:
        return None
    return seat


def save_seat(seat, path=SEAT_FILE):
    with open(path, "w") as f:
        f.write(str(int(seat)) + "\n")


def load_panel(path=PANEL_FILE, kinds=("ssd1306", "sh1106", "ssd1309")):
    """(type, I2C address) of the seat's panel as stored, else DEFAULT_PANEL."""
    try:
        with open(path) as f:
            words = f.read().split()
    except OSError:
        return DEFAULT_PANEL
    if len(words) != 2 or words[0] not in kinds or words[1] not in ("3C", "3D"):
        return DEFAULT_PANEL
    return words[0], int(words[1], 16)


def save_panel(kind, address, path=PANEL_FILE):
    with open(path, "w") as f:
        f.write(kind + " " + ("3C" if address == 0x3C else "3D") + "\n")
