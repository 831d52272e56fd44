"""The example shop's backend: orders, payments, fulfilment and the seller marketplace.

Each module owns one part of the domain and talks to the others through services passed in at
construction time (see ``shop.api.routes.build_services``).
"""

__version__ = "0.4.2"
