"""The app floor: the ``ranklens`` command (:mod:`.cli`), ``ranklens explain``
(:mod:`.explain`), the offline demo (:mod:`.demo`, :mod:`.demo_data`) and the generated
reference pages (:mod:`.reference`). It may import every floor below; nothing imports it.
"""
