% The slides' shortest paths, path lengths bounded by bound(B) (given).
path(T,X,Y,D) :- arc(T,X,Y,D).
path(T,X,Z,D) :- path(T1,X,Y,D1), path(T2,Y,Z,D2), lgr(T1,T2,T), D = D1+D2, D <= B, bound(B).
shorter(T,X,Z,D) :- path(T,X,Z,D), path(T1,X,Z,D1), T1 <= T, D1 < D.
minpath(T,X,Z,D) :- path(T,X,Z,D), not shorter(T,X,Z,D).
#show minpath/4.
