"""Refuse any network connection that is not to loopback, for the whole test session.

An audit hook sees every ``socket.connect`` and ``socket.getaddrinfo`` in the process
(including those made by spaCy, QuickUMLS, NLTK, urllib and Bio.Entrez), so a test that
would reach the network fails loudly instead of passing on a developer's machine.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
from typing import Any

LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}
attempts: list[str] = []


class NetworkBlocked(RuntimeError):
    pass


def _is_loopback(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode()
    if not isinstance(host, str):
        return False
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event == "socket.connect":
        sock, address = args
        if getattr(sock, "family", None) == socket.AF_UNIX:
            return
        host = address[0] if isinstance(address, tuple) else address
    elif event == "socket.getaddrinfo":
        host = args[0]
    else:
        return
    if host is None or _is_loopback(host):
        return
    attempts.append(f"{event} {host!r}")
    raise NetworkBlocked(f"test tried to reach the network: {event} {host!r}")


_installed = False


def install() -> None:
    global _installed
    if not _installed:
        sys.addaudithook(_hook)
        _installed = True
