"""Hard catalogs for the token estimate: enum- and number-heavy tool schemas (codes, currencies,
time zones, MIME types, language tags, versions, dates, addresses, ports, floats, big integers,
SKUs, hashes, operators, CJK, emoji, units). Deterministic: fixed seeds, no data files. Random
mixed-case letter strings are left out: no tokenizer-free estimate bounds them without charging
every ordinary word double."""

from __future__ import annotations

import random
import string
from typing import Any

Schema = tuple[str, str, dict[str, Any]]


def word_list(text: str) -> list[str]:
    """The space-separated words of ``text`` (long literal lists kept short on the page)."""
    return text.split()


def codes_and_numbers() -> list[Schema]:
    rnd = random.Random(7)
    out = []

    def add(name, desc, props, required=()):
        out.append((name, desc, {"type": "object", "properties": props, "required": list(required)}))

    countries = word_list(
        "AF AX AL DZ AS AD AO AI AQ AG AR AM AW AU AT AZ BS BH BD BB BY BE BZ BJ BM BT BO BQ BA "
        "BW BV BR IO BN BG BF BI CV KH CM CA KY CF TD CL CN CX CC CO KM CG CD CK CR CI HR CU CW "
        "CY CZ DK DJ DM DO EC EG SV GQ ER EE SZ ET FK FO FJ FI FR GF PF TF GA GM GE DE GH GI GR "
        "GL GD GP GU GT GG GN GW GY HT HM VA HN HK HU IS IN ID IR IQ IE IM IL IT JM JP JE JO KZ "
        "KE KI KP KR KW KG LA LV LB LS LR LY LI LT LU MO MG MW MY MV ML MT MH MQ MR MU YT MX FM "
        "MD MC MN ME MS MA MZ MM NA NR NP NL NC NZ NI NE NG NU NF MK MP NO OM PK PW PS PA PG PY "
        "PE PH PN PL PT PR QA RE RO RU RW"
    )
    currencies = word_list(
        "AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN "
        "BWP BYN BZD CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD "
        "FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY "
        "KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP "
        "MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR "
        "RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SYP SZL THB TJS TMT TND "
        "TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VES VND VUV WST XAF XCD XOF XPF YER ZAR ZMW ZWL"
    )
    tz = word_list(
        "America/Argentina/Buenos_Aires America/Argentina/Catamarca America/Argentina/Cordoba "
        "America/Argentina/Jujuy America/Argentina/La_Rioja America/Argentina/Mendoza "
        "America/Argentina/Rio_Gallegos America/Argentina/Salta America/Argentina/San_Juan "
        "America/Argentina/San_Luis America/Argentina/Tucuman America/Argentina/Ushuaia "
        "America/Indiana/Indianapolis America/Indiana/Knox America/Indiana/Marengo "
        "America/Indiana/Petersburg America/Kentucky/Louisville America/Kentucky/Monticello "
        "America/North_Dakota/Beulah America/North_Dakota/Center Asia/Ust-Nera Asia/Yekaterinburg "
        "Pacific/Kwajalein Pacific/Chuuk Pacific/Pohnpei Antarctica/DumontDUrville "
        "Antarctica/McMurdo Europe/Ulyanovsk Asia/Novokuznetsk Asia/Srednekolymsk"
    )
    mimes = word_list(
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet "
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document "
        "application/vnd.ms-powerpoint application/x-7z-compressed "
        "application/vnd.oasis.opendocument.text image/svg+xml image/vnd.microsoft.icon "
        "audio/x-ms-wma video/x-matroska application/ld+json application/x-www-form-urlencoded "
        "text/x-python application/x-sh font/woff2"
    )
    langs = word_list(
        "zh-Hant-TW zh-Hans-CN sr-Latn-RS az-Cyrl-AZ uz-Arab-AF pa-Guru-IN ha-Latn-NG mn-Mong-CN "
        "en-US-x-twain de-CH-1901 sl-rozaj-biske x-klingon tlh-Piqd"
    )
    add(
        "geo_country_lookup",
        "Look up a country by ISO code.",
        {
            "code": {"type": "string", "enum": countries},
            "fields": {
                "type": "array",
                "items": {"type": "string", "enum": ["pop", "gdp", "area", "capital", "tld"]},
            },
        },
        ["code"],
    )
    add(
        "fx_convert",
        "Convert money.",
        {
            "from": {"type": "string", "enum": currencies},
            "to": {"type": "string", "enum": currencies},
            "amount": {"type": "number", "minimum": 0.000001, "maximum": 999999999999.99, "multipleOf": 0.01},
        },
        ["from", "to", "amount"],
    )
    add(
        "tz_convert",
        "Convert a time.",
        {
            "zone": {"type": "string", "enum": tz},
            "offset_minutes": {"type": "integer", "minimum": -720, "maximum": 840},
        },
        ["zone"],
    )
    add(
        "file_export",
        "Export a file.",
        {
            "mime": {"type": "string", "enum": mimes},
            "quality": {"type": "number", "minimum": 0.0, "maximum": 1.0, "default": 0.85},
        },
        ["mime"],
    )
    add(
        "translate",
        "Translate text.",
        {"target": {"type": "string", "enum": langs}, "text": {"type": "string"}},
        ["target", "text"],
    )
    # numbers everywhere
    props = {}
    for i in range(40):
        lo = rnd.choice([-2147483648, -9007199254740991, -1e-9, 0, 1e-12, 3.14159265358979])
        hi = rnd.choice([2147483647, 9007199254740991, 1e308, 65535, 4294967295, 123456789.987654321])
        props[f"p{i}"] = {
            "type": rnd.choice(["number", "integer"]),
            "minimum": lo,
            "maximum": hi,
            "default": rnd.randint(-(10**9), 10**9),
        }
    add("sensor_config", "Configure sensor thresholds.", props)
    add(
        "port_scan",
        "Pick ports.",
        {
            "ports": {
                "type": "array",
                "items": {"type": "integer", "enum": sorted(rnd.sample(range(1, 65536), 200))},
            }
        },
    )
    add(
        "float_grid",
        "Floats.",
        {
            "levels": {
                "type": "number",
                "enum": [round(rnd.uniform(-1000, 1000), rnd.randint(1, 9)) for _ in range(150)],
            }
        },
    )
    add(
        "version_pick",
        "Pick a version.",
        {
            "v": {
                "type": "string",
                "enum": [f"{a}.{b}.{c}" for a in range(3) for b in range(10) for c in range(0, 30, 7)],
            }
        },
    )
    add(
        "date_pick",
        "Pick a date.",
        {
            "d": {
                "type": "string",
                "enum": [f"2024-{m:02d}-{d:02d}" for m in range(1, 13) for d in (1, 15, 28)],
            }
        },
    )
    add(
        "ip_pick",
        "Pick an address.",
        {
            "ip": {
                "type": "string",
                "enum": [".".join(str(rnd.randint(0, 255)) for _ in range(4)) for _ in range(80)],
            }
        },
    )
    add(
        "sku_pick",
        "Pick a SKU.",
        {
            "sku": {
                "type": "string",
                "enum": [
                    "".join(rnd.choice(string.ascii_uppercase + string.digits) for _ in range(8))
                    for _ in range(100)
                ],
            }
        },
    )
    add(
        "hex_pick",
        "Pick a colour.",
        {
            "c": {
                "type": "string",
                "enum": ["#" + "".join(rnd.choice("0123456789abcdef") for _ in range(6)) for _ in range(100)],
            }
        },
    )
    add(
        "uuid_pick",
        "Pick a uuid.",
        {"u": {"type": "string", "enum": [f"{rnd.getrandbits(128):032x}" for _ in range(40)]}},
    )
    add(
        "symbol_pick",
        "Pick an operator.",
        {
            "op": {
                "type": "string",
                "enum": word_list(
                    "== != <= >= < > =~ !~ && || << >> ** // % ^ ~ ?: -> => :: .. ... @@ #! ${} $(()) |> <| "
                    "<=>"
                ),
            }
        },
    )
    add(
        "cjk_pick",
        "选择城市。",
        {
            "city": {
                "type": "string",
                "enum": word_list(
                    "北京 上海 广州 深圳 成都 杭州 重庆 武汉 西安 苏州 天津 南京 长沙 郑州 东莞 青岛 沈阳 宁波 昆明 鬱林 龘 𠀋 齉 麤"
                ),
            }
        },
    )
    add(
        "emoji_pick",
        "Pick a mood.",
        {
            "m": {
                "type": "string",
                "enum": word_list("😀 😃 😄 😁 😆 🥹 🫠 👩‍💻 🧑🏽‍🚀 🏳️‍🌈 🇯🇵 🇫🇷 ❤️‍🔥"),
            }
        },
    )
    add(
        "camel_pick",
        "Pick a field.",
        {
            "f": {
                "type": "string",
                "enum": word_list(
                    "createdAtUtc updatedByUserId isXMLHttpRequest getHTTPResponseCode parseJSONToDOM IOError "
                    "PDFExportV2 sRGBColorSpace iPhoneXSMax eBayItemID macOSVersion HTTPSProxyURL"
                ),
            }
        },
    )
    add(
        "unit_pick",
        "Pick a unit.",
        {
            "u": {
                "type": "string",
                "enum": ["m/s²", "km/h", "°C", "°F", "µs", "Ω", "kWh", "mmHg", "ft·lbf", "N·m", "kg/m³", "‰"],
            }
        },
    )
    return out


def versions_paths_and_text(seed: int = 11) -> list[Schema]:
    rnd = random.Random(seed)
    out = []

    def add(name, desc, props):
        out.append((name, desc, {"type": "object", "properties": props, "required": list(props)[:1]}))

    words = word_list(
        "alpha beta gamma delta epsilon zeta theta kappa lambda omicron sigma upsilon omega north "
        "south east west red green blue cyan magenta yellow black white small medium large xlarge "
        "daily weekly monthly yearly pending active archived deleted draft"
    )
    add("status_set", "Set statuses.", {"s": {"type": "string", "enum": words}})
    add(
        "numbers_many",
        "Numbers.",
        {
            f"n{i}": {
                "type": "number",
                "enum": [
                    rnd.choice([1e-7, 2.5e10, -0.0001, 6.02214076e23, 1.602e-19, 299792458, 3.0, -1.5])
                    * rnd.randint(1, 99)
                    for _ in range(12)
                ],
            }
            for i in range(10)
        },
    )
    add(
        "ints_many",
        "Ints.",
        {
            f"i{i}": {
                "type": "integer",
                "minimum": rnd.randint(-(10**15), 0),
                "maximum": rnd.randint(1, 10**15),
                "multipleOf": rnd.randint(2, 999),
            }
            for i in range(30)
        },
    )
    add(
        "codes",
        "Codes.",
        {
            "c": {
                "type": "string",
                "enum": [
                    "".join(rnd.choice(string.ascii_uppercase) for _ in range(rnd.randint(2, 5)))
                    for _ in range(120)
                ],
            }
        },
    )
    add(
        "paths",
        "Paths.",
        {
            "p": {
                "type": "string",
                "enum": [
                    "/"
                    + "/".join(
                        rnd.choice(words) + rnd.choice(["", "_v2", ".json", "-old", "42"])
                        for _ in range(rnd.randint(1, 4))
                    )
                    for _ in range(60)
                ],
            }
        },
    )
    add(
        "semver",
        "Versions.",
        {
            "v": {
                "type": "string",
                "enum": [
                    f"v{rnd.randint(0, 20)}.{rnd.randint(0, 99)}.{rnd.randint(0, 999)}-rc.{rnd.randint(1, 9)}"
                    for _ in range(80)
                ],
            }
        },
    )
    add(
        "times",
        "Times.",
        {
            "t": {
                "type": "string",
                "enum": [
                    f"{rnd.randint(0, 23):02d}:{rnd.randint(0, 59):02d}:{rnd.randint(0, 59):02d}.{rnd.randint(0, 999):03d}Z"
                    for _ in range(80)
                ],
            }
        },
    )
    add(
        "hashes",
        "Hashes.",
        {
            "h": {
                "type": "string",
                "enum": [
                    "sha256:" + "".join(rnd.choice("0123456789abcdef") for _ in range(64)) for _ in range(12)
                ],
            }
        },
    )
    add(
        "snake",
        "Snake fields.",
        {"f": {"type": "string", "enum": ["_".join(rnd.choice(words) for _ in range(3)) for _ in range(60)]}},
    )
    add(
        "mixed_cn",
        "中文描述：选择一个选项，然后返回结果。",
        {
            "x": {
                "type": "string",
                "enum": ["选项" + str(i) for i in range(40)],
                "description": "请选择一个合适的选项。",
            }
        },
    )
    add(
        "nested",
        "Nested numbers.",
        {
            "grid": {
                "type": "array",
                "items": {
                    "type": "array",
                    "items": {"type": "number", "minimum": -1e6, "maximum": 1e6},
                    "minItems": 3,
                    "maxItems": 3,
                },
                "default": [[rnd.random() for _ in range(3)] for _ in range(20)],
            }
        },
    )
    add(
        "bools_nulls",
        "Flags.",
        {f"flag_{i}": {"type": ["boolean", "null"], "default": None} for i in range(40)},
    )
    return out


def hard_catalog() -> list[Schema]:
    return codes_and_numbers() + versions_paths_and_text()
