"""GraphMend rewrites: a data-dependent branch run both ways and merged
(:mod:`.speculate`, :mod:`.joins`, :mod:`.condmerge`), and a ``while`` loop
on tensor data as one ``torch.while_loop`` (:mod:`.whileloop`)."""
