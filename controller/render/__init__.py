"""Pure Pillow drawing for the seat screens (no device, no I/O)."""
