; emit-llvm small.ms fib int
; ModuleID = 'm0.'
source_filename = "m0."
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

define internal fastcc { i1, i64 } @m0.fib.0(ptr %0, i32 %1, i64 %2) unnamed_addr {
entry:
  %vals31.i33 = alloca [1 x [2 x i64]], align 16
  %vals24.i34 = alloca [1 x [2 x i64]], align 16
  %vals23.i35 = alloca [2 x [2 x i64]], align 16
  %vals31.i = alloca [1 x [2 x i64]], align 16
  %vals24.i = alloca [1 x [2 x i64]], align 16
  %vals23.i = alloca [2 x [2 x i64]], align 16
  %vals31 = alloca [1 x [2 x i64]], align 16
  %vals24 = alloca [1 x [2 x i64]], align 16
  %vals23 = alloca [2 x [2 x i64]], align 16
  %vm = load ptr, ptr %0, align 8
  %3 = icmp slt i64 %2, 2
  br i1 %3, label %then, label %fast

common.ret:                                       ; preds = %join32, %badtype30, %fail26, %fail20, %fail5, %toodeep, %then
  %common.ret.op = phi { i1, i64 } [ %4, %then ], [ zeroinitializer, %toodeep ], [ zeroinitializer, %fail5 ], [ zeroinitializer, %fail20 ], [ zeroinitializer, %fail26 ], [ zeroinitializer, %badtype30 ], [ %111, %join32 ]
  ret { i1, i64 } %common.ret.op

then:                                             ; preds = %entry
  %4 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %2, 1
  br label %common.ret

fast:                                             ; preds = %entry
  %5 = add nsw i64 %2, -1
  %6 = add i32 %1, 1
  %7 = getelementptr i8, ptr %vm, i64 280
  %interrupt = load volatile i32, ptr %7, align 4
  %8 = getelementptr i8, ptr %vm, i64 288
  %deadline = load double, ptr %8, align 8
  %9 = fcmp ogt double %deadline, 0.000000e+00
  %10 = icmp ne i32 %interrupt, 0
  %11 = or i1 %10, %9
  %12 = getelementptr i8, ptr %vm, i64 268
  %max = load i32, ptr %12, align 4
  %13 = getelementptr i8, ptr %vm, i64 272
  %limit = load i64, ptr %13, align 4
  %sp = tail call ptr @llvm.stacksave.p0()
  %14 = ptrtoint ptr %sp to i64
  %15 = icmp ugt i64 %limit, %14
  %16 = icmp sle i32 %max, %1
  %17 = or i1 %16, %15
  %18 = or i1 %11, %17
  br i1 %18, label %deep, label %call

deep:                                             ; preds = %fast
  %19 = getelementptr i8, ptr %vm, i64 264
  store i32 %1, ptr %19, align 4
  %20 = tail call i1 @mist_rt_call_check(ptr nonnull %0)
  br i1 %20, label %call, label %toodeep

call:                                             ; preds = %deep, %fast
  call void @llvm.lifetime.start.p0(i64 16, ptr nonnull %vals31.i33)
  call void @llvm.lifetime.start.p0(i64 16, ptr nonnull %vals24.i34)
  call void @llvm.lifetime.start.p0(i64 32, ptr nonnull %vals23.i35)
  %vm.i36 = load ptr, ptr %0, align 8
  %21 = icmp eq i64 %2, 2
  br i1 %21, label %then.i61, label %fast.i37

then.i61:                                         ; preds = %call
  %22 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %5, 1
  br label %m0.fib.twin.1.exit62

fast.i37:                                         ; preds = %call
  %23 = add nsw i64 %2, -2
  %24 = add i32 %1, 2
  %25 = getelementptr i8, ptr %vm.i36, i64 280
  %interrupt.i38 = load volatile i32, ptr %25, align 4
  %26 = getelementptr i8, ptr %vm.i36, i64 288
  %deadline.i39 = load double, ptr %26, align 8
  %27 = fcmp ogt double %deadline.i39, 0.000000e+00
  %28 = icmp ne i32 %interrupt.i38, 0
  %29 = or i1 %28, %27
  %30 = getelementptr i8, ptr %vm.i36, i64 268
  %max.i40 = load i32, ptr %30, align 4
  %31 = getelementptr i8, ptr %vm.i36, i64 272
  %limit.i41 = load i64, ptr %31, align 4
  %sp.i42 = tail call ptr @llvm.stacksave.p0()
  %32 = ptrtoint ptr %sp.i42 to i64
  %33 = icmp ugt i64 %limit.i41, %32
  %34 = icmp sle i32 %max.i40, %6
  %35 = or i1 %34, %33
  %36 = or i1 %29, %35
  br i1 %36, label %deep.i59, label %call.i43

deep.i59:                                         ; preds = %fast.i37
  %37 = getelementptr i8, ptr %vm.i36, i64 264
  store i32 %6, ptr %37, align 4
  %38 = tail call i1 @mist_rt_call_check(ptr nonnull %0)
  br i1 %38, label %call.i43, label %toodeep.i60

call.i43:                                         ; preds = %deep.i59, %fast.i37
  %39 = tail call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %24, i64 %23)
  %ok3.i44 = extractvalue { i1, i64 } %39, 0
  br i1 %ok3.i44, label %ok4.i47, label %fail5.i45

toodeep.i60:                                      ; preds = %deep.i59
  tail call void @mist_rt_fail(ptr nonnull %0, i32 15)
  br label %m0.fib.twin.1.exit62

ok4.i47:                                          ; preds = %call.i43
  %40 = extractvalue { i1, i64 } %39, 1
  %41 = add nsw i64 %2, -3
  %42 = tail call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %24, i64 %41)
  %ok18.i48 = extractvalue { i1, i64 } %42, 0
  br i1 %ok18.i48, label %ok19.i50, label %fail20.i49

fail5.i45:                                        ; preds = %call.i43
  tail call void @mist_rt_fail(ptr nonnull %0, i32 16)
  br label %m0.fib.twin.1.exit62

ok19.i50:                                         ; preds = %ok4.i47
  %43 = extractvalue { i1, i64 } %42, 1
  %44 = tail call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %40, i64 %43)
  %45 = extractvalue { i64, i1 } %44, 1
  br i1 %45, label %slow22.i53, label %fast21.i51

fail20.i49:                                       ; preds = %ok4.i47
  tail call void @mist_rt_fail(ptr nonnull %0, i32 20)
  br label %m0.fib.twin.1.exit62

fast21.i51:                                       ; preds = %ok19.i50
  %46 = extractvalue { i64, i1 } %44, 0
  br label %join32.i52

slow22.i53:                                       ; preds = %ok19.i50
  store i64 3, ptr %vals23.i35, align 16
  %47 = getelementptr inbounds i8, ptr %vals23.i35, i64 8
  store i64 %40, ptr %47, align 8
  %48 = getelementptr inbounds i8, ptr %vals23.i35, i64 16
  store i64 3, ptr %48, align 16
  %49 = getelementptr inbounds i8, ptr %vals23.i35, i64 24
  store i64 %43, ptr %49, align 8
  %50 = getelementptr i8, ptr %vm.i36, i64 264
  store i32 %6, ptr %50, align 4
  %51 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %vals23.i35, ptr nonnull %vals24.i34)
  br i1 %51, label %ok25.i55, label %fail26.i54

ok25.i55:                                         ; preds = %slow22.i53
  %tag27.i56 = load i64, ptr %vals24.i34, align 16
  %52 = getelementptr inbounds i8, ptr %vals24.i34, i64 8
  %pay28.i57 = load i64, ptr %52, align 8
  %53 = icmp eq i64 %tag27.i56, 3
  br i1 %53, label %join32.i52, label %badtype30.i58

fail26.i54:                                       ; preds = %slow22.i53
  call void @mist_rt_fail(ptr nonnull %0, i32 21)
  br label %m0.fib.twin.1.exit62

badtype30.i58:                                    ; preds = %ok25.i55
  store i64 %tag27.i56, ptr %vals31.i33, align 16
  %54 = getelementptr inbounds i8, ptr %vals31.i33, i64 8
  store i64 %pay28.i57, ptr %54, align 8
  %55 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals31.i33, i32 22)
  call void @mist_rt_fail(ptr nonnull %0, i32 23)
  br label %m0.fib.twin.1.exit62

join32.i52:                                       ; preds = %ok25.i55, %fast21.i51
  %56 = phi i64 [ %46, %fast21.i51 ], [ %pay28.i57, %ok25.i55 ]
  %57 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %56, 1
  br label %m0.fib.twin.1.exit62

m0.fib.twin.1.exit62:                             ; preds = %then.i61, %toodeep.i60, %fail5.i45, %fail20.i49, %fail26.i54, %badtype30.i58, %join32.i52
  %common.ret.op.i46 = phi { i1, i64 } [ %22, %then.i61 ], [ zeroinitializer, %toodeep.i60 ], [ zeroinitializer, %fail5.i45 ], [ zeroinitializer, %fail20.i49 ], [ zeroinitializer, %fail26.i54 ], [ zeroinitializer, %badtype30.i58 ], [ %57, %join32.i52 ]
  call void @llvm.lifetime.end.p0(i64 16, ptr nonnull %vals31.i33)
  call void @llvm.lifetime.end.p0(i64 16, ptr nonnull %vals24.i34)
  call void @llvm.lifetime.end.p0(i64 32, ptr nonnull %vals23.i35)
  %ok3 = extractvalue { i1, i64 } %common.ret.op.i46, 0
  br i1 %ok3, label %ok4, label %fail5

toodeep:                                          ; preds = %deep
  tail call void @mist_rt_fail(ptr nonnull %0, i32 3)
  br label %common.ret

ok4:                                              ; preds = %m0.fib.twin.1.exit62
  %58 = extractvalue { i1, i64 } %common.ret.op.i46, 1
  %59 = add nsw i64 %2, -2
  call void @llvm.lifetime.start.p0(i64 16, ptr nonnull %vals31.i)
  call void @llvm.lifetime.start.p0(i64 16, ptr nonnull %vals24.i)
  call void @llvm.lifetime.start.p0(i64 32, ptr nonnull %vals23.i)
  %vm.i = load ptr, ptr %0, align 8
  %60 = icmp ult i64 %59, 2
  br i1 %60, label %then.i, label %fast.i

then.i:                                           ; preds = %ok4
  %61 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %59, 1
  br label %m0.fib.twin.1.exit

fast.i:                                           ; preds = %ok4
  %62 = add nsw i64 %2, -3
  %63 = add i32 %1, 2
  %64 = getelementptr i8, ptr %vm.i, i64 280
  %interrupt.i = load volatile i32, ptr %64, align 4
  %65 = getelementptr i8, ptr %vm.i, i64 288
  %deadline.i = load double, ptr %65, align 8
  %66 = fcmp ogt double %deadline.i, 0.000000e+00
  %67 = icmp ne i32 %interrupt.i, 0
  %68 = or i1 %67, %66
  %69 = getelementptr i8, ptr %vm.i, i64 268
  %max.i = load i32, ptr %69, align 4
  %70 = getelementptr i8, ptr %vm.i, i64 272
  %limit.i = load i64, ptr %70, align 4
  %sp.i = call ptr @llvm.stacksave.p0()
  %71 = ptrtoint ptr %sp.i to i64
  %72 = icmp ugt i64 %limit.i, %71
  %73 = icmp sle i32 %max.i, %6
  %74 = or i1 %73, %72
  %75 = or i1 %68, %74
  br i1 %75, label %deep.i, label %call.i

deep.i:                                           ; preds = %fast.i
  %76 = getelementptr i8, ptr %vm.i, i64 264
  store i32 %6, ptr %76, align 4
  %77 = call i1 @mist_rt_call_check(ptr nonnull %0)
  br i1 %77, label %call.i, label %toodeep.i

call.i:                                           ; preds = %deep.i, %fast.i
  %78 = call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %63, i64 %62)
  %ok3.i = extractvalue { i1, i64 } %78, 0
  br i1 %ok3.i, label %ok4.i, label %fail5.i

toodeep.i:                                        ; preds = %deep.i
  call void @mist_rt_fail(ptr nonnull %0, i32 15)
  br label %m0.fib.twin.1.exit

ok4.i:                                            ; preds = %call.i
  %79 = extractvalue { i1, i64 } %78, 1
  %80 = add nsw i64 %2, -4
  %81 = call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %63, i64 %80)
  %ok18.i = extractvalue { i1, i64 } %81, 0
  br i1 %ok18.i, label %ok19.i, label %fail20.i

fail5.i:                                          ; preds = %call.i
  call void @mist_rt_fail(ptr nonnull %0, i32 16)
  br label %m0.fib.twin.1.exit

ok19.i:                                           ; preds = %ok4.i
  %82 = extractvalue { i1, i64 } %81, 1
  %83 = call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %79, i64 %82)
  %84 = extractvalue { i64, i1 } %83, 1
  br i1 %84, label %slow22.i, label %fast21.i

fail20.i:                                         ; preds = %ok4.i
  call void @mist_rt_fail(ptr nonnull %0, i32 20)
  br label %m0.fib.twin.1.exit

fast21.i:                                         ; preds = %ok19.i
  %85 = extractvalue { i64, i1 } %83, 0
  br label %join32.i

slow22.i:                                         ; preds = %ok19.i
  store i64 3, ptr %vals23.i, align 16
  %86 = getelementptr inbounds i8, ptr %vals23.i, i64 8
  store i64 %79, ptr %86, align 8
  %87 = getelementptr inbounds i8, ptr %vals23.i, i64 16
  store i64 3, ptr %87, align 16
  %88 = getelementptr inbounds i8, ptr %vals23.i, i64 24
  store i64 %82, ptr %88, align 8
  %89 = getelementptr i8, ptr %vm.i, i64 264
  store i32 %6, ptr %89, align 4
  %90 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %vals23.i, ptr nonnull %vals24.i)
  br i1 %90, label %ok25.i, label %fail26.i

ok25.i:                                           ; preds = %slow22.i
  %tag27.i = load i64, ptr %vals24.i, align 16
  %91 = getelementptr inbounds i8, ptr %vals24.i, i64 8
  %pay28.i = load i64, ptr %91, align 8
  %92 = icmp eq i64 %tag27.i, 3
  br i1 %92, label %join32.i, label %badtype30.i

fail26.i:                                         ; preds = %slow22.i
  call void @mist_rt_fail(ptr nonnull %0, i32 21)
  br label %m0.fib.twin.1.exit

badtype30.i:                                      ; preds = %ok25.i
  store i64 %tag27.i, ptr %vals31.i, align 16
  %93 = getelementptr inbounds i8, ptr %vals31.i, i64 8
  store i64 %pay28.i, ptr %93, align 8
  %94 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals31.i, i32 22)
  call void @mist_rt_fail(ptr nonnull %0, i32 23)
  br label %m0.fib.twin.1.exit

join32.i:                                         ; preds = %ok25.i, %fast21.i
  %95 = phi i64 [ %85, %fast21.i ], [ %pay28.i, %ok25.i ]
  %96 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %95, 1
  br label %m0.fib.twin.1.exit

m0.fib.twin.1.exit:                               ; preds = %then.i, %toodeep.i, %fail5.i, %fail20.i, %fail26.i, %badtype30.i, %join32.i
  %common.ret.op.i = phi { i1, i64 } [ %61, %then.i ], [ zeroinitializer, %toodeep.i ], [ zeroinitializer, %fail5.i ], [ zeroinitializer, %fail20.i ], [ zeroinitializer, %fail26.i ], [ zeroinitializer, %badtype30.i ], [ %96, %join32.i ]
  call void @llvm.lifetime.end.p0(i64 16, ptr nonnull %vals31.i)
  call void @llvm.lifetime.end.p0(i64 16, ptr nonnull %vals24.i)
  call void @llvm.lifetime.end.p0(i64 32, ptr nonnull %vals23.i)
  %ok18 = extractvalue { i1, i64 } %common.ret.op.i, 0
  br i1 %ok18, label %ok19, label %fail20

fail5:                                            ; preds = %m0.fib.twin.1.exit62
  call void @mist_rt_fail(ptr nonnull %0, i32 4)
  br label %common.ret

ok19:                                             ; preds = %m0.fib.twin.1.exit
  %97 = extractvalue { i1, i64 } %common.ret.op.i, 1
  %98 = call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %58, i64 %97)
  %99 = extractvalue { i64, i1 } %98, 1
  br i1 %99, label %slow22, label %fast21

fail20:                                           ; preds = %m0.fib.twin.1.exit
  call void @mist_rt_fail(ptr nonnull %0, i32 8)
  br label %common.ret

fast21:                                           ; preds = %ok19
  %100 = extractvalue { i64, i1 } %98, 0
  br label %join32

slow22:                                           ; preds = %ok19
  store i64 3, ptr %vals23, align 16
  %101 = getelementptr inbounds i8, ptr %vals23, i64 8
  store i64 %58, ptr %101, align 8
  %102 = getelementptr inbounds i8, ptr %vals23, i64 16
  store i64 3, ptr %102, align 16
  %103 = getelementptr inbounds i8, ptr %vals23, i64 24
  store i64 %97, ptr %103, align 8
  %104 = getelementptr i8, ptr %vm, i64 264
  store i32 %1, ptr %104, align 4
  %105 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %vals23, ptr nonnull %vals24)
  br i1 %105, label %ok25, label %fail26

ok25:                                             ; preds = %slow22
  %tag27 = load i64, ptr %vals24, align 16
  %106 = getelementptr inbounds i8, ptr %vals24, i64 8
  %pay28 = load i64, ptr %106, align 8
  %107 = icmp eq i64 %tag27, 3
  br i1 %107, label %join32, label %badtype30

fail26:                                           ; preds = %slow22
  call void @mist_rt_fail(ptr nonnull %0, i32 9)
  br label %common.ret

badtype30:                                        ; preds = %ok25
  store i64 %tag27, ptr %vals31, align 16
  %108 = getelementptr inbounds i8, ptr %vals31, i64 8
  store i64 %pay28, ptr %108, align 8
  %109 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals31, i32 10)
  call void @mist_rt_fail(ptr nonnull %0, i32 11)
  br label %common.ret

join32:                                           ; preds = %ok25, %fast21
  %110 = phi i64 [ %100, %fast21 ], [ %pay28, %ok25 ]
  %111 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %110, 1
  br label %common.ret
}

declare i1 @mist_rt_prim(ptr, i32, i32, ptr, ptr) local_unnamed_addr

declare void @mist_rt_fail(ptr, i32) local_unnamed_addr

declare i1 @mist_rt_bad_value(ptr, ptr, i32) local_unnamed_addr

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn
declare ptr @llvm.stacksave.p0() #0

declare i1 @mist_rt_call_check(ptr) local_unnamed_addr

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare { i64, i1 } @llvm.sadd.with.overflow.i64(i64, i64) #1

define noundef i1 @m0.entry(ptr %0, ptr nocapture readonly %1, ptr nocapture readnone %2, ptr nocapture writeonly %3) local_unnamed_addr {
entry:
  %vm = load ptr, ptr %0, align 8
  %4 = getelementptr i8, ptr %1, i64 8
  %pay = load i64, ptr %4, align 4
  %5 = getelementptr i8, ptr %vm, i64 264
  %depth = load i32, ptr %5, align 4
  %6 = tail call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %depth, i64 %pay)
  store i32 %depth, ptr %5, align 4
  %7 = extractvalue { i1, i64 } %6, 0
  br i1 %7, label %ok, label %common.ret

common.ret:                                       ; preds = %entry, %ok
  ret i1 %7

ok:                                               ; preds = %entry
  %8 = extractvalue { i1, i64 } %6, 1
  store i64 3, ptr %3, align 4
  %9 = getelementptr i8, ptr %3, i64 8
  store i64 %8, ptr %9, align 4
  br label %common.ret
}

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.start.p0(i64 immarg, ptr nocapture) #2

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.end.p0(i64 immarg, ptr nocapture) #2

attributes #0 = { mustprogress nocallback nofree nosync nounwind willreturn }
attributes #1 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #2 = { nocallback nofree nosync nounwind willreturn memory(argmem: readwrite) }
