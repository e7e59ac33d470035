"""The paper's ELO table (spec §5.1, Table 2), printed beside ours for scale.

Our numbers cannot reproduce it: its pools held entrants the table does not list (its per-game
columns do not average 1500, spec §4 point 5), and ELO is relative to the pool it was computed in.
It shows what spread the paper's models reached and where its Random baseline sits.
"""

from __future__ import annotations

TABLE2_GAMES = ("flappybird", "pong", "race", "supermario", "tempestrun")

# model: (Flappybird, Pong, Race, Supermario, Tempestrun, Avg. ELO, Avg. Ratio %)
TABLE2: dict[str, tuple[int, int, int, int, int, int, float]] = {
    "GPT-4o": (1618, 1531, 1716, 1582, 1548, 1599, 26.6),
    "Gemini-2.0-Flash-Thinking": (1579, 1552, 1648, 1631, 1525, 1587, 22.6),
    "Gemini-2.0-Flash": (1559, 1541, 1582, 1561, 1541, 1557, 16.7),
    "Qwen2.5-VL-72B-Instruct": (1563, 1525, 1624, 1620, 1559, 1578, 21.5),
    "InternVL2.5-78B": (1529, 1539, 1577, 1614, 1541, 1560, 19.2),
    "Qwen2-VL-72B-Instruct": (1490, 1527, 1587, 1576, 1561, 1548, 16.5),
    "InternVL2.5-8B": (1521, 1530, 1556, 1438, 1506, 1510, 12.9),
    "Qwen2.5-VL-7B-Instruct": (1469, 1530, 1548, 1476, 1494, 1503, 12.7),
    "Random": (1493, 1516, 1561, 1490, 1456, 1503, 11.0),
    "LLaVA-Onevision-Qwen2-7B": (1489, 1495, 1522, 1448, 1538, 1498, 13.0),
    "Keye-VL-8B-Preview": (1487, 1518, 1566, 1401, 1513, 1497, 13.1),
    "Qwen2-VL-7B-Instruct": (1484, 1506, 1529, 1426, 1518, 1493, 11.4),
    "LLaVA-v1.6-Mistral-7B": (1513, 1512, 1470, 1396, 1385, 1455, 9.2),
    "Phi-4-multimodal-instruct": (1441, 1510, 1388, 1502, 1389, 1446, 13.7),
    "LLaVA-1.5-7B": (1425, 1304, 1214, 1473, 1356, 1354, 14.1),
}


def table2_json() -> dict[str, dict[str, float]]:
    """Table 2 in the shape of our ``--json`` output: per model its games, avg_elo and avg_ratio."""
    out = {}
    for model, row in TABLE2.items():
        entry: dict[str, float] = dict(zip(TABLE2_GAMES, map(float, row[:5])))
        entry["avg_elo"] = float(row[5])
        entry["avg_ratio_pct"] = row[6]
        out[model] = entry
    return out
