"""docs/embedding.md's example runs and does what the page says."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

DOC = Path(__file__).resolve().parents[4] / "docs" / "embedding.md"


async def test_embedding_example_runs(capsys: Any) -> None:
    text = DOC.read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S)
    assert code is not None
    namespace: dict[str, Any] = {"__name__": "embedding_example"}
    exec(compile(code.group(1), str(DOC), "exec"), namespace)
    answer = await namespace["main"]()
    assert answer == "It is 21.5 °C in the room."
    printed = capsys.readouterr().out
    assert "[thermometer: 21.5 °C]" in printed
