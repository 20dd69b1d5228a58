import pytest

from .harness import CHAINS


@pytest.fixture(params=CHAINS)
def chain(request: pytest.FixtureRequest) -> str:
    value: str = request.param
    return value
