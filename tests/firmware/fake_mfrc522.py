"""The firmware tests' simulated MFRC522: the package's own (``controller.hal.mock_mfrc522``)."""

from controller.hal.mock_mfrc522 import FakePin, SimMFRC522, SimTag, to_bits

__all__ = ["FakePin", "SimMFRC522", "SimTag", "to_bits"]
