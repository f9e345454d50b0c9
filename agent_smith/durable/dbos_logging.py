"""DBOS logs through the application's logging, like the rest of the library.

Imported before DBOS itself (first in the package): DBOS puts a console
handler of its own on its ``dbos`` logger unless that logger has a handler
already. A library installs no console handler; with this one the records
propagate to wherever the application's logging sends them.
"""

import logging

logging.getLogger("dbos").addHandler(logging.NullHandler())
