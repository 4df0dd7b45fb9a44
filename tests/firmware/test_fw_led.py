"""Status LED patterns and their priorities."""

from __future__ import annotations

from seatnode.led import BOOT_MS, StatusLed


def lit_ms(led: StatusLed, start: int, span: int, host: bool = True, reader: bool = True) -> int:
    return sum(led.is_on(t, host, reader) for t in range(start, start + span))


def test_boot_then_host_mode() -> None:
    led = StatusLed(0)
    assert led.pattern(0, True, True) == "BOOT"
    assert led.pattern(BOOT_MS, True, True) == "OFF"
    assert lit_ms(led, 1000, 1000) == 0
    led.set_mode("ON")
    assert lit_ms(led, 2000, 1000) == 1000
    led.set_mode("SLOW")
    assert lit_ms(led, 3000, 1000) == 500
    led.set_mode("FAST")
    assert lit_ms(led, 4000, 1000) == 500
    led.set_mode("PURPLE")  # unknown modes are ignored
    assert led.mode == "FAST"


def test_priorities() -> None:
    led = StatusLed(0)
    t = 10_000
    assert led.pattern(t, host_alive=False, reader_ok=True) == "NOHOST"
    assert led.pattern(t, host_alive=False, reader_ok=False) == "READER"
    led.identify(5, t)
    assert led.pattern(t, host_alive=False, reader_ok=False) == "IDENT"
    assert led.pattern(t + 5000, host_alive=True, reader_ok=True) == "OFF"
    led.identify(5, t)
    led.identify(0, t + 1)
    assert led.pattern(t + 2, True, True) == "OFF"


def test_no_host_is_a_short_blip_and_identify_blinks_fast() -> None:
    led = StatusLed(0)
    assert lit_ms(led, 10_000, 2000, host=False) == 50
    led.identify(10, 20_000)
    assert lit_ms(led, 20_000, 1000) == 500


def test_flash_inverts_host_mode_briefly() -> None:
    led = StatusLed(0)
    led.set_mode("ON")
    led.flash(5000)
    assert not led.is_on(5000, True, True)
    assert not led.is_on(5079, True, True)
    assert led.is_on(5080, True, True)
