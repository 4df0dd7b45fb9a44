"""Per-table keys: HKDF-SHA256 as RFC 5869 defines it, one key per table and tournament,
owner-only key files."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from controller.tournament.wire.keys import (
    InsecureKeyFileError,
    check_private,
    derive_table_key,
    hkdf_sha256,
    load_private_key,
    write_private,
)


def test_hkdf_matches_rfc_5869() -> None:
    # RFC 5869, appendix A.1 (test case 1) and A.3 (test case 3: no salt, no info)
    okm = hkdf_sha256(
        bytes([0x0B] * 22), salt=bytes(range(13)), info=bytes(range(0xF0, 0xFA)), length=42
    )
    assert okm.hex() == (
        "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"
    )
    okm = hkdf_sha256(bytes([0x0B] * 22), salt=bytes(32), info=b"", length=42)
    assert okm.hex() == (
        "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"
    )


def test_each_table_and_tournament_has_its_own_key() -> None:
    secret = bytes(range(32))
    keys = {derive_table_key(secret, t, m) for t in ("copa", "liga") for m in ("m1", "m2")}
    assert len(keys) == 4 and all(len(k) == 32 for k in keys)
    assert derive_table_key(secret, "copa", "m1") == derive_table_key(secret, "copa", "m1")
    with pytest.raises(ValueError):
        derive_table_key(secret, "copa", "m 1")


def test_key_files_are_owner_only_and_others_refused(tmp_path: Path) -> None:
    path = write_private(tmp_path / "new" / "table.key", ("ab" * 32 + "\n").encode())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert load_private_key(path).key == bytes.fromhex("ab" * 32)
    for mode in (0o640, 0o604, 0o660):
        path.chmod(mode)
        with pytest.raises(InsecureKeyFileError, match=f"modo {mode:03o}"):
            check_private(path)
        with pytest.raises(InsecureKeyFileError):
            load_private_key(path)
