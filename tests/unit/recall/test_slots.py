"""The slot rules of changed-value contradictions (service/memories/slots.py)."""

from __future__ import annotations

import pytest

from memoryd.service.memories.slots import changed_value, slot_of

SUPERSEDES = [
    ("The deadline is Friday", "The deadline moved to Monday", "weekday"),
    ("the deadline is friday", "The deadline has been pushed back to next Monday", "weekday"),
    ("The meeting is at 3pm", "The meeting was moved to 4:30 pm", "time"),
    ("The launch date is March 3", "The launch date moved to March 10", "date"),
    ("The budget is 5000 dollars", "The budget was changed to 7000 dollars", "number dollars"),
    ("The budget is $5000", "The budget is now $7000", "number"),
    ("The offsite location is Berlin", "The offsite location changed to Munich", "place or name"),
    ("The team lead is Alice", "The team lead is now Bob", "place or name"),
    ("截止日期是周五", "截止日期改到周一了", "weekday"),
    ("会议时间是下午3点", "会议时间改成下午4点", "time"),
    ("发布日期是3月3日", "发布日期推迟到3月10日", "date"),
    ("会议地点是北京", "会议地点改到上海", "place or name"),
    ("我的截止日期是周五", "截止日期提前到周三", "weekday"),
]
KEPT = [
    ("Project Alpha's deadline is Friday", "Project Beta's deadline is Monday"),
    ("A项目的截止日期是周五", "B项目的截止日期是周一"),
    ("The meeting is on Monday", "The meeting is at 3pm"),
    ("It is Friday", "It is Monday"),
    ("The user is 30", "The user is 5 feet tall"),
    ("The deadline is Friday", "The deadline is Friday"),
    ("The user is vegetarian", "The user is tired"),
    ("The weather is nice today", "The weather is bad today"),
    ("The deadline is Friday. Then we rest", "The deadline moved to Monday"),
    ("这个是周五", "这个改到周一"),
]


@pytest.mark.parametrize(("old", "new", "kind"), SUPERSEDES)
def test_a_later_value_of_one_slot_supersedes(old: str, new: str, kind: str) -> None:
    reason = changed_value(new, old)
    assert reason is not None and reason.startswith(f"rule: new {kind} for ")
    slot = slot_of(new)
    assert slot is not None and slot.kind == kind


@pytest.mark.parametrize(("old", "new"), KEPT)
def test_other_subjects_kinds_and_shapes_do_not(old: str, new: str) -> None:
    assert changed_value(new, old) is None
