"""Room settings: defaults, refusals that name the setting, and the largest loss they allow."""

from __future__ import annotations

from typing import Any

import pytest

from services.games.maubinh import InstantWin, MauBinhSettings, SettingsError


def test_defaults_follow_the_spec() -> None:
    settings = MauBinhSettings.from_mapping({})
    assert settings == MauBinhSettings()
    assert settings.to_dict() == {
        "scoop_multiplier": 3,
        "optional_instant_wins": [],
        "optional_instant_win_units": 6,
        "commission_bps": 0,
    }
    assert settings.instant_units(InstantWin.RONG_CUON) == 26 and settings.instant_units(InstantWin.SANH_RONG) == 13


def test_overrides_by_name_round_trip() -> None:
    values = {
        "scoop_multiplier": 2,
        "optional_instant_wins": ["six_pairs", "three_flushes"],
        "optional_instant_win_units": 9,
        "commission_bps": 500,
    }
    settings = MauBinhSettings.from_mapping(values)
    assert settings.optional_instant_wins == (InstantWin.SIX_PAIRS, InstantWin.THREE_FLUSHES)
    assert settings.instant_units(InstantWin.SIX_PAIRS) == 9
    assert settings.to_dict() == values


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"scoop": 2}, "unknown setting(s): scoop (known: commission_bps, optional_instant_win_units,"),
        ({"scoop_multiplier": 0}, "setting scoop_multiplier: expected a whole number 1–10, got 0"),
        ({"scoop_multiplier": 11}, "setting scoop_multiplier: expected a whole number 1–10, got 11"),
        ({"scoop_multiplier": 2.5}, "setting scoop_multiplier: expected a whole number 1–10, got 2.5"),
        ({"scoop_multiplier": True}, "setting scoop_multiplier: expected a whole number 1–10, got True"),
        ({"scoop_multiplier": "3"}, "setting scoop_multiplier: expected a whole number 1–10, got '3'"),
        ({"optional_instant_win_units": 101}, "setting optional_instant_win_units: expected a whole number 1–100"),
        ({"commission_bps": -1}, "setting commission_bps: expected a whole number 0–10000, got -1"),
        ({"optional_instant_wins": "six_pairs"}, "setting optional_instant_wins: expected a list of kind names"),
        ({"optional_instant_wins": ["royal"]}, "setting optional_instant_wins: 'royal' is not an optional kind"),
        ({"optional_instant_wins": ["sanh_rong"]}, "'sanh_rong' is not an optional kind (always on)"),
        ({"optional_instant_wins": ["six_pairs", "six_pairs"]}, "a kind is listed twice"),
    ],
)
def test_bad_settings_are_refused_by_name(values: dict[str, Any], message: str) -> None:
    with pytest.raises(SettingsError) as raised:
        MauBinhSettings.from_mapping(values)
    assert message in str(raised.value)


def test_settings_must_be_an_object() -> None:
    with pytest.raises(SettingsError, match="settings must be an object"):
        MauBinhSettings.from_mapping([("scoop_multiplier", 2)])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("values", "per_opponent"),
    [
        ({}, 54),  # the spec: max(26, (5 + 10 + 3) × 3)
        ({"scoop_multiplier": 2}, 36),
        ({"scoop_multiplier": 1}, 26),  # rồng cuốn
        ({"optional_instant_wins": ["six_pairs"], "optional_instant_win_units": 60}, 60),
        ({"optional_instant_win_units": 60}, 54),  # units of kinds that are off do not count
    ],
)
def test_the_largest_loss_is_derived_from_the_settings(values: dict[str, Any], per_opponent: int) -> None:
    settings = MauBinhSettings.from_mapping(values)
    assert settings.largest_loss_per_opponent == per_opponent
    assert settings.largest_loss(4) == 3 * per_opponent and settings.largest_loss(2) == per_opponent
