"""The scheduling loop's inbox (vcore_kube.inbox): the fast lane first, each lane in order, a relist ordering both."""

from __future__ import annotations

import queue
import threading

import pytest

from vcore_kube.inbox import Inbox


def drain(inbox):
    out = []
    try:
        while True:
            out.append(inbox.get_nowait())
    except queue.Empty:
        return out


def test_fast_lane_first_each_lane_in_order():
    inbox = Inbox()
    for m in ("b1", "b2"):
        inbox.put(m)
    inbox.put("f1", fast=True)
    inbox.put("b3")
    inbox.put("f2", fast=True)
    assert len(inbox) == 5
    assert drain(inbox) == ["f1", "f2", "b1", "b2", "b3"]


def test_a_relist_holds_the_fast_messages_after_it():
    inbox = Inbox()
    inbox.put("b1")
    inbox.put("f-before", fast=True)
    inbox.put("relist", barrier=True)
    inbox.put("f-after", fast=True)
    inbox.put("b2")
    assert inbox.get_fast_nowait() == "f-before"
    with pytest.raises(queue.Empty):
        inbox.get_fast_nowait()  # f-after waits for the relist
    assert drain(inbox) == ["b1", "relist", "f-after", "b2"]


def test_get_waits_for_a_message_and_times_out():
    inbox = Inbox()
    with pytest.raises(queue.Empty):
        inbox.get(timeout=0.01)
    threading.Timer(0.05, lambda: inbox.put("late", fast=True)).start()
    assert inbox.get(timeout=5) == "late"
