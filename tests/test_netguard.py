import socket
import urllib.request

import pytest

from tests.netguard import NetworkBlocked


def test_connection_to_public_address_is_refused() -> None:
    with pytest.raises(NetworkBlocked):
        socket.create_connection(("93.184.216.34", 80), timeout=1)


def test_name_lookup_of_public_host_is_refused() -> None:
    with pytest.raises(NetworkBlocked):
        urllib.request.urlopen("https://eutils.ncbi.nlm.nih.gov/entrez/eutils/einfo.fcgi", timeout=1)


def test_loopback_is_allowed() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    with socket.create_connection(("127.0.0.1", port), timeout=1):
        pass
    server.close()
