"""Hardware access for the table (seat nodes over USB serial: ``seatlink``, its frames:
``frames``)."""
