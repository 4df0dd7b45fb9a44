# /main.py on the Pico: MicroPython runs this after boot.  See firmware/README.md.
from seatnode import main

main.start()
