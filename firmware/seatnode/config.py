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

# Reader polling period: a card counts as arrived after CONFIRM_READS (2, in
# seatnode/tags.py) identical consecutive reads, so it reaches the Pi at most
# 2 x 15 ms + one read (about 10.5 ms for a 7-byte UID) after landing: under 50 ms
# (firmware/PROTOCOL.md, "Timing").
POLL_READER_MS = 15
REINIT_READER_MS = 2000  # how often to retry a reader that did not answer
LOOP_SLEEP_MS = 5  # the loop never sleeps past a due poll

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
