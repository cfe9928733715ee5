"""Date and timestamp strings read the way Spark's ``from_json`` reads them (no format option).

Spark parses them like ``CAST(string AS DATE)`` / ``CAST(string AS TIMESTAMP)``: surrounding
whitespace and control characters are ignored;

* a date is ``[+-]yyyy[y..]``, ``yyyy-[m]m`` or ``yyyy-[m]m-[d]d``, optionally followed by a
  space or ``T`` and anything (the time is ignored);
* a timestamp is a date as above, optionally followed by a space or ``T`` and
  ``[h]h[:[m]m[:[s]s[.fraction]]][zone]`` (digits beyond microseconds dropped), or only the time
  (``[h]h:[m]m...`` or ``T[h]h...``; the date is then today's in the zone). ``zone`` is ``Z``,
  an offset (``+h``, ``+hh``, ``+hh:mm``, ``+hhmm``, ``+hh:mm:ss``), ``UTC``/``GMT``/``UT``
  with or without an offset, a region (``Europe/Paris``) or one of Java's short ids (``EST``);
  without a zone the session time zone applies.

Each function returns ``None`` where Spark's cast returns null (the record is then malformed).
Years run from -999999999 to 999999999 as in ``java.time``; a region zone outside years 1-9999
is not supported (Python's ``zoneinfo``) and gives ``None``.
"""

from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo

__all__ = ["parse_zone", "string_to_days", "string_to_micros"]

_EPOCH_DAYS = 719_468  # days from 0000-03-01 to 1970-01-01 (Hinnant's civil calendar)
_US_PER_DAY = 86_400_000_000
_LONG = 2**63

# java.time.ZoneId.SHORT_IDS
_SHORT_IDS = {
    "ACT": "Australia/Darwin", "AET": "Australia/Sydney", "AGT": "America/Argentina/Buenos_Aires",
    "ART": "Africa/Cairo", "AST": "America/Anchorage", "BET": "America/Sao_Paulo",
    "BST": "Asia/Dhaka", "CAT": "Africa/Harare", "CNT": "America/St_Johns",
    "CST": "America/Chicago", "CTT": "Asia/Shanghai", "EAT": "Africa/Addis_Ababa",
    "ECT": "Europe/Paris", "IET": "America/Indiana/Indianapolis", "IST": "Asia/Kolkata",
    "JST": "Asia/Tokyo", "MIT": "Pacific/Apia", "NET": "Asia/Yerevan", "NST": "Pacific/Auckland",
    "PLT": "Asia/Karachi", "PNT": "America/Phoenix", "PRT": "America/Puerto_Rico",
    "PST": "America/Los_Angeles", "SST": "Pacific/Guadalcanal", "VST": "Asia/Ho_Chi_Minh",
    "EST": "-05:00", "MST": "-07:00", "HST": "-10:00",
}  # fmt: skip
_OFFSET = re.compile(
    r"(?P<sign>[+-])(?:(?P<h>\d{1,2})|(?P<hm>\d\d:?\d\d)|(?P<hms>\d\d:\d\d:\d\d|\d{6}))"
)
_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_ISO_TIMESTAMP = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?"
    r"(?:Z|[+-](?:(?:0[0-9]|1[0-7]):[0-5][0-9]|18:00))?"
)
_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()
_WHITESPACE = "".join(chr(c) for c in range(33)) + "\x7f"


def _days_from_civil(year: int, month: int, day: int) -> int | None:
    if not (1 <= month <= 12 and 1 <= day <= 31) or abs(year) > 999_999_999:
        return None
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    last = (29 if leap else 28) if month == 2 else 30 if month in (4, 6, 9, 11) else 31
    if day > last:
        return None
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146_097 + doe - _EPOCH_DAYS


def string_to_days(text: str) -> int | None:
    """Days since 1970-01-01 of a date string, as Spark's cast to date."""
    if _ISO_DATE.fullmatch(text):  # the common yyyy-mm-dd, by the C parser
        try:
            return dt.date.fromisoformat(text).toordinal() - _EPOCH_ORDINAL
        except ValueError:
            pass  # an invalid day, or year 0: the general parser decides
    s = text.strip(_WHITESPACE)
    if not s:
        return None
    sign = 1
    pos = 0
    if s[0] in "+-":
        sign = -1 if s[0] == "-" else 1
        pos = 1
    segments = [1, 1, 1]
    index = value = digits = 0
    while pos < len(s) and index < 3 and s[pos] not in " T":
        char = s[pos]
        if index < 2 and char == "-":
            if not _date_digits(index, digits):
                return None
            segments[index] = value
            value = digits = 0
            index += 1
        elif "0" <= char <= "9":
            value = value * 10 + ord(char) - 48
            digits += 1
        else:
            return None
        pos += 1
    if not _date_digits(index, digits) or (index < 2 and pos < len(s)):
        return None
    segments[index] = value
    return _days_from_civil(sign * segments[0], segments[1], segments[2])


def _date_digits(segment: int, digits: int) -> bool:
    return 4 <= digits <= 7 if segment == 0 else 0 < digits <= 2


def _ts_digits(segment: int, digits: int) -> bool:
    if segment == 6:
        return True
    if segment == 0:
        return 4 <= digits <= 6
    if segment == 7:
        return digits <= 2
    return 0 < digits <= 2


def parse_zone(name: str) -> dt.tzinfo | None:
    """A zone as Spark's ``getZoneId`` (``java.time.ZoneId.of`` with short ids) reads it."""
    name = name.strip()
    if name == "Z":
        return dt.UTC
    name = _SHORT_IDS.get(name, name)
    for prefix in ("UTC", "GMT", "UT"):
        if name.startswith(prefix) and (len(name) == len(prefix) or name[len(prefix)] in "+-"):
            rest = name[len(prefix) :]
            return dt.UTC if not rest else _offset(rest)
    if name[:1] in "+-":
        return _offset(name)
    try:
        return ZoneInfo(name)
    except (ValueError, OSError, KeyError):
        return None


def _offset(text: str) -> dt.tzinfo | None:
    # Spark first widens "+h:mm" to "+0h:mm" and "+hh:m" to "+hh:0m"; then java.time's
    # ZoneOffset.of: +h, +hh, +hh:mm, +hhmm, +hh:mm:ss, +hhmmss, at most 18 hours
    text = re.sub(r"^([+-])(\d):", r"\g<1>0\2:", text)
    text = re.sub(r"^([+-])(\d\d):(\d)$", r"\1\2:0\3", text)
    match = _OFFSET.fullmatch(text)
    if match is None:
        return None
    digits = (match["h"] or match["hm"] or match["hms"]).replace(":", "")
    h, m, sec = int(digits[:2]), int(digits[2:4] or 0), int(digits[4:6] or 0)
    sign = match["sign"]
    total = h * 3600 + m * 60 + sec
    if m > 59 or sec > 59 or total > 18 * 3600:
        return None
    return dt.timezone(dt.timedelta(seconds=-total if sign == "-" else total))


def string_to_micros(text: str, session_zone: dt.tzinfo) -> int | None:
    """Microseconds since the epoch of a timestamp string, as Spark's cast to timestamp."""
    if _ISO_TIMESTAMP.fullmatch(text):  # the common RFC 3339 shapes, by the C parser
        try:
            parsed = dt.datetime.fromisoformat(text)
        except ValueError:
            parsed = None
        if parsed is not None:
            local = (
                (parsed.toordinal() - _EPOCH_ORDINAL) * _US_PER_DAY
                + ((parsed.hour * 60 + parsed.minute) * 60 + parsed.second) * 1_000_000
                + parsed.microsecond
            )
            offset = parsed.utcoffset()
            if offset is None:
                found = _utc_offset_us(session_zone, local)
                return None if found is None else local - found
            return local - (offset.days * 86_400 + offset.seconds) * 1_000_000
    s = text.strip(_WHITESPACE)
    if not s:
        return None
    segments = [1, 1, 1, 0, 0, 0, 0, 0, 0]
    index = value = digits = fraction_digits = 0
    just_time = False
    year_sign: int | None = None
    zone_text: str | None = None
    pos = 0
    if s[0] in "+-":
        year_sign = -1 if s[0] == "-" else 1
        pos = 1
    end = len(s)
    while pos < end:
        char = s[pos]
        if "0" <= char <= "9":
            if index == 6:
                fraction_digits += 1
            if index != 6 or digits < 6:
                value = value * 10 + ord(char) - 48
            digits += 1
        elif pos == 0 and char == "T":
            just_time = True
            index += 3
        elif index < 2:
            if char == "-":
                if not _ts_digits(index, digits):
                    return None
                segments[index] = value
                value = digits = 0
                index += 1
            elif index == 0 and char == ":" and year_sign is None:
                just_time = True
                if not _ts_digits(3, digits):
                    return None
                segments[3] = value
                value = digits = 0
                index = 4
            else:
                return None
        elif index == 2:
            if char not in " T" or not _ts_digits(index, digits):
                return None
            segments[index] = value
            value = digits = 0
            index += 1
        elif index in (3, 4):
            if char != ":" or not _ts_digits(index, digits):
                return None
            segments[index] = value
            value = digits = 0
            index += 1
        elif index in (5, 6):
            if not _ts_digits(index, digits):
                return None
            segments[index] = value
            value = digits = 0
            if char == "." and index == 5:
                index += 1
            else:
                index += 2 if index == 5 else 1
                zone_text = s[pos:end]
                pos = end - 1
        else:
            if index < len(segments) and char in ": ":
                if not _ts_digits(index, digits):
                    return None
                segments[index] = value
                value = digits = 0
                index += 1
            else:
                return None
        pos += 1
    if not _ts_digits(index, digits):
        return None
    segments[index] = value
    while fraction_digits < 6:
        segments[6] *= 10
        fraction_digits += 1
    zone = session_zone
    if zone_text is not None:
        parsed = parse_zone(zone_text)
        if parsed is None:
            return None
        zone = parsed
    hour, minute, second = segments[3], segments[4], segments[5]
    if hour > 23 or minute > 59 or second > 59:
        return None
    if just_time:
        today = dt.datetime.now(zone).date()
        days: int | None = _days_from_civil(today.year, today.month, today.day)
    else:
        days = _days_from_civil(segments[0] * (year_sign or 1), segments[1], segments[2])
    if days is None:
        return None
    local = days * _US_PER_DAY + ((hour * 60 + minute) * 60 + second) * 1_000_000 + segments[6]
    offset = _utc_offset_us(zone, local)
    if offset is None:
        return None
    micros = local - offset
    return micros if -_LONG <= micros < _LONG else None


def _utc_offset_us(zone: dt.tzinfo, local_us: int) -> int | None:
    if isinstance(zone, dt.timezone):
        delta = zone.utcoffset(None)
    else:
        try:
            naive = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=local_us)
        except OverflowError:
            return None
        # java.time: a gap moves forward by its length (fold 0's offset); an overlap takes the
        # earlier offset (fold 0)
        delta = naive.replace(tzinfo=zone, fold=0).utcoffset()
    assert delta is not None
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
