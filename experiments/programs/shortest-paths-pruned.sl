% Continuous shortest paths, non-minimal paths pruned as soon as generated (experiments/README.md, "Streamlog
% benchmarks"): a path at T is kept only when no minpath known before T is strictly shorter, a condition over
% earlier timestamps only; lgr written out as its cases, the earlier side of a join a minpath. bound(B) is given.
path(T,X,Z,D) :- arc(T,X,Z,D), #false : minpath(T0,X,Z,D0), T0 < T, D0 < D.
path(T,X,Z,D) :- path(T,X,Y,D1), path(T,Y,Z,D2), D = D1+D2, D <= B, bound(B), #false : minpath(T0,X,Z,D0), T0 < T, D0 < D.
path(T,X,Z,D) :- path(T,X,Y,D1), minpath(T2,Y,Z,D2), T2 < T, D = D1+D2, D <= B, bound(B), #false : minpath(T0,X,Z,D0), T0 < T, D0 < D.
path(T,X,Z,D) :- minpath(T1,X,Y,D1), T1 < T, path(T,Y,Z,D2), D = D1+D2, D <= B, bound(B), #false : minpath(T0,X,Z,D0), T0 < T, D0 < D.
shorter(T,X,Z,D) :- path(T,X,Z,D), path(T,X,Z,D1), D1 < D.
minpath(T,X,Z,D) :- path(T,X,Z,D), not shorter(T,X,Z,D).
#show minpath/4.
